"""The compile boundary (python/tileops/_torch.py): under torch.compile an op call is one graph node,
a torch custom operator per effect branch, whose fake kernel runs the C++ signature check alone.
CPU tensors; the oracle is the eager call, itself checked against float64 in test_tileops.py.
"""
import pytest

torch = pytest.importorskip("torch")

import tileops  # noqa: E402  (after torch: the operators are registered when torch is present)


def nodes_of(fn, *args):
    """The call_function targets of the graphs torch.compile traces for fn(*args), and whether it
    broke the graph."""
    targets, graphs = [], []

    def backend(gm, example_inputs):
        graphs.append(gm)
        targets.extend(str(n.target) for n in gm.graph.nodes if n.op == "call_function")
        return gm.forward

    torch._dynamo.reset()
    result = torch.compile(fn, backend=backend, fullgraph=True)(*args)
    return result, targets, len(graphs)


def test_an_op_is_one_node_of_a_full_graph_and_computes_as_eager():
    op = tileops.RMSNormFwdOp([64], eps=1e-6)
    x, w = torch.randn(4, 64), torch.randn(64)
    result, targets, graphs = nodes_of(lambda x, w: op(x, w) * 2, x, w)
    assert graphs == 1
    assert "tileops.norm_rms_norm_fwd.default" in targets
    torch.testing.assert_close(result, op(x, w) * 2, rtol=0, atol=0)


def test_each_effect_branch_is_its_own_operator():
    op = tileops.RMSNormFwdOp([64])
    x, w, out = torch.randn(4, 64), torch.randn(64), torch.empty(4, 64)

    def with_out(x, w, out):
        op(x, w, out=out)
        return out + 1

    result, targets, _ = nodes_of(with_out, x, w, out)
    assert "tileops.norm_rms_norm_fwd_out.default" in targets
    torch.testing.assert_close(result, op(x, w) + 1, rtol=0, atol=0)
    # The optional weight left out is the same operator, given None.
    _, targets, _ = nodes_of(lambda x: op(x), x)
    assert "tileops.norm_rms_norm_fwd.default" in targets


def test_tracing_leaves_last_call_as_the_last_real_call():
    op = tileops.SiluFwdOp()
    op(torch.randn(2, 8))
    seen = []

    def backend(gm, example_inputs):
        seen.append(op.last_call["tensors"]["x"]["shape"])  # after tracing, before running
        return gm.forward

    torch._dynamo.reset()
    torch.compile(lambda x: op(x), backend=backend, fullgraph=True)(torch.randn(5, 3))
    assert seen == [(2, 8)]
    assert op.last_call["tensors"]["x"]["shape"] == (5, 3)  # the compiled graph's real call


def test_an_in_place_op_mutates_its_inputs_under_compile():
    op = tileops.RopeFwdOp()
    positions = torch.tensor([3, 0, 1])
    cache = torch.randn(4, 8)
    query, key = torch.randn(3, 2, 8), torch.randn(3, 1, 8)
    want_q, want_k = query.clone(), key.clone()
    op(positions, want_q, want_k, cache)

    def rotate(positions, query, key, cache):
        op(positions, query, key, cache)
        return query.sum() + key.sum()

    _, targets, graphs = nodes_of(rotate, positions, query, key, cache)
    assert graphs == 1
    assert any(t.startswith("tileops.rope_fwd_writes_key_writes_query") for t in targets), targets
    torch.testing.assert_close(query, want_q, rtol=0, atol=0)
    torch.testing.assert_close(key, want_k, rtol=0, atol=0)


def test_a_bad_call_fails_while_tracing_with_the_library_message():
    op = tileops.RMSNormFwdOp([64])
    torch._dynamo.reset()
    with pytest.raises(Exception, match="RMSNormFwdOp: x dtype is outside"):
        torch.compile(lambda x: op(x), backend="aot_eager", fullgraph=True)(
            torch.ones(2, 64, dtype=torch.int32))


@pytest.mark.parametrize("strict", [True, False])
def test_torch_export_records_the_op_as_its_operator(strict):
    # Strict export traces with dynamo (the fast path's first test folds to True); non-strict export
    # runs the Python with fake tensors, which the fast path declines, and the general path sends
    # them to the operator (tileops/_classes.py, call_general).
    op = tileops.RMSNormFwdOp([64], eps=1e-6)

    class Model(torch.nn.Module):
        def forward(self, x, w):
            return op(x, w) * 2

    x, w = torch.randn(4, 64), torch.randn(64)
    exported = torch.export.export(Model(), (x, w), strict=strict)
    targets = [str(n.target) for n in exported.graph.nodes if n.op == "call_function"]
    assert targets == ["tileops.norm_rms_norm_fwd.default", "aten.mul.Tensor"]
    torch.testing.assert_close(exported.module()(x, w), op(x, w) * 2, rtol=0, atol=0)


# One call of every op with a call-time tensor input: the op and its inputs (CPU tensors, the
# optional ones given). Ops without tensor inputs (AlibiFwdOp builds its bias from params) have no
# operator to trace.
def _cases():
    g = torch.Generator().manual_seed(21)

    def randn(*shape, dtype=torch.float32):
        return torch.randn(*shape, generator=g).to(dtype)

    bf16 = torch.bfloat16
    return {
        "AddFwdOp": lambda: (tileops.AddFwdOp(alpha=2), (randn(4, 8), randn(8))),
        "MulFwdOp": lambda: (tileops.MulFwdOp(), (randn(4, 8), randn(4, 1))),
        "SiluFwdOp": lambda: (tileops.SiluFwdOp(), (randn(4, 8),)),
        "GeluFwdOp": lambda: (tileops.GeluFwdOp(approximate="tanh"), (randn(4, 8),)),
        "SiluAndMulFwdOp": lambda: (tileops.SiluAndMulFwdOp(), (randn(4, 16),)),
        "GeluAndMulFwdOp": lambda: (tileops.GeluAndMulFwdOp(), (randn(4, 16),)),
        "SoftmaxFwdOp": lambda: (tileops.SoftmaxFwdOp(), (randn(4, 8),)),
        "LogSoftmaxFwdOp": lambda: (tileops.LogSoftmaxFwdOp(), (randn(4, 8),)),
        "SumFwdOp": lambda: (tileops.SumFwdOp(), (randn(4, 8),)),
        "MeanFwdOp": lambda: (tileops.MeanFwdOp(), (randn(4, 8),)),
        "AmaxFwdOp": lambda: (tileops.AmaxFwdOp(), (randn(4, 8),)),
        "RMSNormFwdOp": lambda: (tileops.RMSNormFwdOp([8]), (randn(4, 8), randn(8))),
        "LayerNormFwdOp": lambda: (tileops.LayerNormFwdOp([8]), (randn(4, 8), randn(8), randn(8))),
        "FusedAddRMSNormFwdOp": lambda: (tileops.FusedAddRMSNormFwdOp(),
                                         (randn(4, 8), randn(4, 8), randn(8))),
        "ResidualRMSNormFwdOp": lambda: (tileops.ResidualRMSNormFwdOp([8]),
                                         (randn(4, 8), randn(4, 8), randn(8))),
        "GemmFwdOp": lambda: (tileops.GemmFwdOp(), (randn(4, 8), randn(8, 16), randn(16))),
        "BmmFwdOp": lambda: (tileops.BmmFwdOp(), (randn(2, 4, 8), randn(2, 8, 16))),
        "GroupedGemmFwdOp": lambda: (tileops.GroupedGemmFwdOp(),
                                     (randn(8, 16, dtype=bf16), randn(2, 16, 8, dtype=bf16),
                                      torch.tensor([3, 8], dtype=torch.int32))),
        "RopeFwdOp": lambda: (tileops.RopeFwdOp(is_neox=True),
                              (torch.tensor([5, 0, 2]), randn(3, 2, 16), randn(3, 1, 16),
                               randn(8, 16))),
    }


def _eligible_ops():
    return {name for name in dir(tileops)
            if isinstance(getattr(tileops, name), type) and hasattr(getattr(tileops, name), "entry")
            and getattr(tileops, name).entry["inputs"]}


def test_every_op_with_a_tensor_input_has_a_compile_test():
    assert set(_cases()) == _eligible_ops()


def _clones(args):
    return [a.clone() for a in args]


@pytest.mark.parametrize("name", sorted(_cases()))
def test_every_op_compiles_cold_to_one_node_and_computes_as_eager(name):
    # torch.compile's default backend (inductor) with fullgraph=True, from a cold cache: the result
    # and every input the op writes in place equal the eager call's.
    op, args = _cases()[name]()
    eager_args = _clones(args)
    want = op(*eager_args)
    torch._dynamo.reset()
    compiled_args = _clones(args)
    got = torch.compile(op, fullgraph=True)(*compiled_args)
    torch.testing.assert_close(got, want, rtol=0, atol=0)
    for before, after in zip(eager_args, compiled_args):
        torch.testing.assert_close(after, before, rtol=0, atol=0)
    _, targets, graphs = nodes_of(lambda *a: op(*a), *_clones(args))
    assert graphs == 1
    assert sum(t.startswith("tileops.") for t in targets) == 1, targets


@pytest.mark.parametrize("name", sorted(_cases()))
def test_every_operator_of_every_op_passes_opcheck(name):
    # Every effect branch's operator (optional inputs present or not, out= passed or not), with
    # torch.library.opcheck's schema, fake-tensor, autograd-registration and AOT-dispatch tests.
    op, args = _cases()[name]()
    result = op(*_clones(args))
    from tileops import _torch
    entry = type(op).entry
    buffer = next((i for i, o in enumerate(entry["outputs"]) if o["buffer_out"]), None)
    checked = set()
    for (present, has_out), (operator, _) in _torch._registered[name].items():
        if operator in checked:
            continue
        checked.add(operator)
        arrays = [a if p else None for a, p in zip(_clones(args), present)]
        if has_out:
            full = result[buffer] if isinstance(result, tuple) else result
            arrays.append(torch.empty_like(full))
        torch.library.opcheck(operator, (op._key, *arrays))
    assert checked


def test_dynamic_shapes_recompile_or_trace_symbolically_with_correct_results():
    op = tileops.RMSNormFwdOp([8], eps=1e-6)
    torch._dynamo.reset()
    compiled = torch.compile(lambda x, w: op(x, w) * 2, fullgraph=True, dynamic=True)
    w = torch.randn(8)
    for rows in (3, 5, 17):
        x = torch.randn(rows, 8)
        torch.testing.assert_close(compiled(x, w), op(x, w) * 2, rtol=0, atol=0)


def test_an_input_that_requires_grad_is_refused_under_compile_as_in_eager():
    # The ops have no backward: traced with a tensor that requires grad, the call fails with the
    # library's message instead of leaving the gradient silently None.
    op = tileops.RMSNormFwdOp([8])
    x, w = torch.randn(4, 8, requires_grad=True), torch.randn(8)
    torch._dynamo.reset()
    with pytest.raises(Exception, match="RMSNormFwdOp: x requires grad, and tileops ops have no "
                                        "backward"):
        torch.compile(lambda x: op(x, w), fullgraph=True, backend="aot_eager")(x)
    torch._dynamo.reset()
    with torch.no_grad():
        y = torch.compile(lambda x: op(x, w), fullgraph=True, backend="aot_eager")(x)
    torch.testing.assert_close(y, op(x.detach(), w), rtol=0, atol=0)


def test_an_op_of_no_tensor_argument_compiles_on_its_device_param():
    op = tileops.AlibiFwdOp(num_heads=2, seq_len=3, device="cpu")
    result, targets, graphs = nodes_of(lambda: op())
    assert graphs == 1 and len(targets) == 1
    torch.testing.assert_close(result, torch.from_numpy(op()), rtol=0, atol=0)


FIRST_INSTANCES_SCRIPT = """
import threading, torch, tileops
errors = []
def make():
    try:
        tileops.SiluFwdOp()
    except Exception as e:
        errors.append(e)
threads = [threading.Thread(target=make) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
assert not errors, errors
print("ok")
"""


def test_first_instances_made_on_several_threads_define_the_operators_once():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", FIRST_INSTANCES_SCRIPT], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("ok")


def test_the_operators_pass_opcheck():
    op = tileops.GeluAndMulFwdOp(approximate="tanh")
    x = torch.randn(3, 16)
    op(x)
    torch.library.opcheck(torch.ops.tileops.activation_gelu_and_mul_fwd.default, (op._key, x))


def test_inductor_compiles_a_graph_around_the_op():
    op = tileops.AddFwdOp(alpha=2)
    a, b = torch.randn(8, 32), torch.randn(32)
    torch._dynamo.reset()
    compiled = torch.compile(lambda a, b: torch.relu(op(a, b)), fullgraph=True)
    torch.testing.assert_close(compiled(a, b), torch.relu(a + 2 * b), rtol=1e-6, atol=1e-6)


def test_an_op_made_before_torch_was_imported_is_reachable_after_an_eager_call():
    # A fresh interpreter: here torch is imported before every op of the session.
    import subprocess
    import sys
    import textwrap

    script = textwrap.dedent("""
        import numpy as np, tileops
        early = tileops.SiluFwdOp()
        early(np.ones(4, np.float32))
        import torch
        late = tileops.SiluFwdOp()
        x = torch.randn(4)
        early(x)
        f = torch.compile(lambda x: early(x) + late(x), fullgraph=True, backend="aot_eager")
        assert torch.equal(f(x), early(x) + late(x))
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("ok")


# ---- The C++ operator kernel (Note [The C++ operator kernel] in python/torch_kernel/) ----------

KERNEL_SCRIPT = """
import gc, os, torch, tileops
op = tileops.RMSNormFwdOp([64], eps=1e-6)
from tileops import _torch
cpp = os.environ["TILEOPS_TORCH_CPP_KERNEL"] == "1"
assert _torch.cpp_kernel == cpp
x, w = torch.randn(4, 64), torch.randn(64)
out = torch.full((4, 64), float("nan"))
torch.ops.tileops.norm_rms_norm_fwd_out.default(op._key, x, w, out)
want = (x.double() * torch.rsqrt(x.double().pow(2).mean(-1, keepdim=True) + 1e-6)) * w.double()
torch.testing.assert_close(out.double(), want, rtol=1e-5, atol=1e-6)
# The functional branch returns a new tensor; the call is the instance's (its record).
y = torch.ops.tileops.norm_rms_norm_fwd.default(op._key, x, None)
torch.testing.assert_close(y.double(), want / w.double(), rtol=1e-5, atol=1e-6)
assert op.last_call["tensors"]["x"]["shape"] == (4, 64)
# Under torch.compile, one node running the same kernel.
torch._dynamo.reset()
f = torch.compile(lambda x, w: op(x, w) * 2, fullgraph=True, backend="aot_eager")
torch.testing.assert_close(f(x, w), op(x, w) * 2, rtol=0, atol=0)
# The library's CheckError as ValueError, with its message.
try:
    torch.ops.tileops.norm_rms_norm_fwd.default(op._key, torch.ones(2, 64, dtype=torch.int32), None)
    raise AssertionError("no error")
except ValueError as e:
    assert "RMSNormFwdOp: x dtype is outside" in str(e), e
# A tensor with torch's negative bit (z.conj().imag; its memory holds the values negated): the
# dispatcher resolves the bit before the kernel, which computes on the values.
negated = torch.randn(4, 64, dtype=torch.complex64).conj().imag
torch.testing.assert_close(torch.ops.tileops.norm_rms_norm_fwd.default(op._key, negated, None),
                           op(negated.resolve_neg()), rtol=0, atol=0)
# A key whose instance is gone.
silu = tileops.SiluFwdOp()
silu(torch.randn(3))
key = silu._key
del silu
gc.collect()
try:
    torch.ops.tileops.activation_silu_fwd.default(key, torch.randn(3))
    raise AssertionError("no error")
except RuntimeError as e:
    assert (f"no live op instance has the key {key}" if cpp else key) in str(e), e
if cpp:
    # An error torch itself formats from the kernel's library (its TORCH_CHECK): on the GPU machine
    # this aborted the process while libtileops_core exported the C++ runtime's std::locale (Note
    # [Shared libraries keep archives' symbols] in cmake/TileopsSharedLibrary.cmake).
    try:
        torch.ops.tileops_torch.register_call_kernel("activation_silu_fwd", [0], 1, False)
        raise AssertionError("no error")
    except RuntimeError as e:
        assert "tileops::activation_silu_fwd already has its kernel" in str(e), e
print("ok")
"""


@pytest.mark.parametrize("cpp", ["1", "0"], ids=["cpp-kernel", "python-kernel"])
def test_each_operator_kernel_computes_raises_and_finds_instances_by_key(cpp):
    # The kernel is chosen at import (TILEOPS_TORCH_CPP_KERNEL): a fresh interpreter for each.
    import os
    import subprocess
    import sys

    env = dict(os.environ, TILEOPS_TORCH_CPP_KERNEL=cpp)
    done = subprocess.run([sys.executable, "-c", KERNEL_SCRIPT], capture_output=True,
                          text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("ok")


def test_a_bad_call_at_run_time_raises_the_library_message_as_value_error():
    op = tileops.RMSNormFwdOp([64])
    op(torch.randn(2, 64))
    with pytest.raises(ValueError, match="RMSNormFwdOp: x dtype is outside"):
        torch.ops.tileops.norm_rms_norm_fwd.default(op._key, torch.ones(2, 64, dtype=torch.int32),
                                                    None)
