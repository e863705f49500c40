"""The tileops Python package on the CPU: classes derived from the manifest, DLPack exchange
without copies (NumPy, torch when installed), out=, in-place ops, typed errors and records.

The oracles are float64 NumPy computations written here. Run: python -m pytest tests/python
after `pip install .` (README.md, "Python").
"""
import inspect
import threading

import numpy as np
import pytest

import tileops


def rng(seed):
    return np.random.default_rng(seed)


def rms_norm_oracle(x, w, eps):
    x64 = x.astype(np.float64)
    y = x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + eps)
    return y * w.astype(np.float64)


def test_every_registered_op_class_is_a_python_class():
    names = {e["name"] for e in tileops._C.entries()}
    assert {"RMSNormFwdOp", "AddFwdOp", "SiluAndMulFwdOp", "RopeFwdOp"} <= names
    for name in names:
        cls = getattr(tileops, name)
        assert issubclass(cls, tileops.OpBase)
        assert name in cls.__doc__


def test_signatures_come_from_the_manifest():
    init = inspect.signature(tileops.RMSNormFwdOp.__init__)
    assert list(init.parameters) == ["self", "normalized_shape", "eps", "target"]
    assert init.parameters["target"].kind is inspect.Parameter.KEYWORD_ONLY
    assert init.parameters["eps"].default is None
    assert init.parameters["normalized_shape"].default is inspect.Parameter.empty
    call = inspect.signature(tileops.RMSNormFwdOp.__call__)
    assert list(call.parameters) == ["self", "x", "weight", "out"]
    assert call.parameters["weight"].default is None
    assert call.parameters["out"].kind is inspect.Parameter.KEYWORD_ONLY
    add_init = inspect.signature(tileops.AddFwdOp.__init__)
    assert add_init.parameters["alpha"].kind is inspect.Parameter.KEYWORD_ONLY
    assert add_init.parameters["alpha"].default == 1
    # RopeFwdOp writes its inputs and declares no buffer: no out= in its call.
    assert "out" not in inspect.signature(tileops.RopeFwdOp.__call__).parameters


def test_rms_norm_on_numpy_matches_the_oracle_and_returns_numpy():
    x = rng(1).standard_normal((3, 257)).astype(np.float32)
    w = rng(2).standard_normal(257).astype(np.float32)
    y = tileops.RMSNormFwdOp([257], eps=1e-5)(x, w)
    assert isinstance(y, np.ndarray) and y.dtype == np.float32 and y.shape == (3, 257)
    np.testing.assert_allclose(y, rms_norm_oracle(x, w, 1e-5), rtol=1e-5, atol=1e-6)


def test_every_dtype_on_one_instance():
    op = tileops.SiluFwdOp()
    for dtype in (np.float16, np.float32):
        x = (rng(3).standard_normal(1000) * 4).astype(dtype)
        x64 = x.astype(np.float64)
        want = x64 / (1 + np.exp(-x64))
        rtol = 2.0 ** -10 if dtype == np.float16 else 1e-5
        np.testing.assert_allclose(op(x).astype(np.float64), want, rtol=rtol, atol=1e-5)


def test_out_is_written_in_place_and_returned_as_given():
    a = rng(4).standard_normal((4, 8)).astype(np.float32)
    b = rng(5).standard_normal(8).astype(np.float32)
    out = np.full((4, 8), np.nan, np.float32)
    result = tileops.AddFwdOp(alpha=0.5)(a, b, out=out)
    assert result is out
    np.testing.assert_allclose(out, a.astype(np.float64) + 0.5 * b, rtol=1e-6)


def test_integer_add_wraps_like_numpy():
    a = np.array([2**31 - 1, 5, -7], np.int32)
    b = np.array([1, 2, 3], np.int32)
    np.testing.assert_array_equal(tileops.AddFwdOp(alpha=2)(a, b), a + 2 * b)


def test_inputs_cross_without_a_copy_rope_rotates_numpy_arrays_in_place():
    n, hq, hk, d, p = 3, 2, 1, 8, 5
    positions = np.array([4, 0, 2], np.int64)
    query = rng(6).standard_normal((n, hq, d)).astype(np.float32)
    key = rng(7).standard_normal((n, hk, d)).astype(np.float32)
    cache = rng(8).standard_normal((p, d)).astype(np.float32)
    q0, k0 = query.copy(), key.copy()
    assert tileops.RopeFwdOp(is_neox=True)(positions, query, key, cache) is None

    def rotate(x):
        half = d // 2
        y = x.astype(np.float64).copy()
        for t in range(n):
            c, s = cache[positions[t], :half], cache[positions[t], half:]
            x1, x2 = x[t, :, :half].astype(np.float64), x[t, :, half:].astype(np.float64)
            y[t, :, :half] = x1 * c - x2 * s
            y[t, :, half:] = x2 * c + x1 * s
        return y

    np.testing.assert_allclose(query, rotate(q0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(key, rotate(k0), rtol=1e-5, atol=1e-6)


def test_outputs_do_not_share_memory_with_inputs():
    x = rng(9).standard_normal((2, 16)).astype(np.float32)
    y = tileops.GeluFwdOp(approximate="tanh")(x)
    assert not np.shares_memory(x, y)


def test_a_bad_call_raises_the_typed_error_naming_the_tensor_and_the_rule():
    op = tileops.RMSNormFwdOp([8])
    with pytest.raises(tileops.CheckError) as info:
        op(np.ones((2, 8), np.int32))
    assert isinstance(info.value, ValueError)
    assert str(info.value) == ("RMSNormFwdOp: x dtype is outside [float16, bfloat16, float32]; "
                               "got int32")
    with pytest.raises(tileops.CheckError, match="SiluAndMulFwdOp: x axis 1 is not 2 \\* N; got 7"):
        tileops.SiluAndMulFwdOp()(np.ones((2, 7), np.float32))
    # The instance still serves a good call afterwards.
    assert op(np.ones((2, 8), np.float32)).shape == (2, 8)


def test_an_array_dlpack_cannot_carry_raises_the_dlpack_error_naming_the_input():
    op = tileops.SoftmaxFwdOp(dim=-1)
    x = np.random.default_rng(3).random((4, 8), dtype=np.float32)
    # A negative stride (a reversed NumPy view): the library's views have none.
    with pytest.raises(tileops.DLPackError,
                       match="SoftmaxFwdOp: input x: from_dlpack: negative stride -1 at axis 1"):
        op(x[:, ::-1])
    with pytest.raises(tileops.DLPackError,
                       match="SoftmaxFwdOp: out: from_dlpack: negative stride -8 at axis 0"):
        op(x, out=np.empty((4, 8), np.float32)[::-1])
    # What NumPy itself cannot export: NumPy's reason, said of the input, as the library's error.
    with pytest.raises(tileops.DLPackError,
                       match="SoftmaxFwdOp: input x: the ndarray cannot cross through DLPack: "
                             ".*byte order"):
        op(x.astype(">f4"))
    with pytest.raises(BufferError, match="SoftmaxFwdOp: input x: the ndarray cannot cross"):
        op(x.astype(object))  # DLPackError, a BufferError as NumPy's own refusal is
    # An array whose data is not aligned to its elements (NumPy makes one over a byte buffer).
    unaligned = np.ndarray((4, 8), np.float32, buffer=np.zeros(4 * 8 * 4 + 1, np.uint8), offset=1)
    with pytest.raises(tileops.DLPackError,
                       match="SoftmaxFwdOp: input x: from_dlpack: Tensor::from_blob: data at .* is "
                             "not aligned to its 4-byte float32 elements"):
        op(unaligned)
    # Their contiguous copies go through.
    flipped = np.ascontiguousarray(x[:, ::-1])
    expected = np.exp(flipped - flipped.max(-1, keepdims=True))
    np.testing.assert_allclose(op(flipped), expected / expected.sum(-1, keepdims=True), rtol=1e-6)


def test_explain_names_the_op_and_the_input_it_cannot_take():
    with pytest.raises(tileops.DLPackError,
                       match="RMSNormFwdOp: explain's input x: from_dlpack: negative stride"):
        tileops.RMSNormFwdOp([4]).explain(np.ones((2, 4), np.float32)[:, ::-1], device="cpu")


def test_a_torch_tensor_with_a_lazy_bit_is_refused_naming_it():
    torch = pytest.importorskip("torch")
    op = tileops.SoftmaxFwdOp(dim=-1)
    z = torch.randn(4, 8, dtype=torch.complex64)
    negated = z.conj().imag  # z's memory, read through torch's negative bit
    assert negated.is_neg()
    with pytest.raises(tileops.DLPackError,
                       match="SoftmaxFwdOp: input x has torch's negative bit set"):
        op(negated)
    with pytest.raises(tileops.DLPackError, match="SoftmaxFwdOp: out has torch's negative bit set"):
        op(z.real.contiguous(), out=torch.zeros(4, 8, dtype=torch.complex64).conj().imag)
    # The fast path declines it, so that the general path raises that error.
    assert op._op.call_torch((negated,), None) is NotImplemented
    torch.testing.assert_close(op(negated.resolve_neg()), torch.softmax(-z.imag, -1))


def test_an_output_the_callers_framework_cannot_hold_raises_naming_it():
    # A call of no array returns NumPy arrays, which hold neither a meta tensor (an op made for the
    # meta device states only its output's geometry) nor a bfloat16.
    with pytest.raises(tileops.DLPackError,
                       match=r"AlibiFwdOp: output output \(float32 \[2, 3, 3\]\) cannot be "
                             r"returned as a numpy array: .*meta tensor has no data"):
        tileops.AlibiFwdOp(num_heads=2, seq_len=3, device="meta")()
    with pytest.raises(tileops.DLPackError,
                       match=r"AlibiFwdOp: output output \(bfloat16 \[2, 2, 2\]\) cannot be "
                             r"returned as a numpy array"):
        tileops.AlibiFwdOp(num_heads=2, seq_len=2, out_dtype="bfloat16", device="cpu")()


def test_a_call_of_no_array_returns_numpy_whether_or_not_torch_is_loaded():
    pytest.importorskip("torch")
    op = tileops.AlibiFwdOp(num_heads=2, seq_len=3, device="cpu")
    assert [type(op()) for _ in range(3)] == [np.ndarray] * 3  # the fast path declines it


def test_dlpack_tensor_keywords_are_checked_as_the_specification_gives_them():
    x = np.ones(3, np.float32)
    exported = tileops.SiluFwdOp()._op.call([x], None, None)[0]  # a DLPackTensor
    for kwargs, error, message in [
            ({"max_version": ()}, TypeError, r"max_version is a tuple of two ints; got \(\)"),
            ({"max_version": (2**70, 0)}, TypeError, "max_version holds an int past int64"),
            ({"max_version": ("a", "b")}, TypeError, "max_version holds a str, not an int"),
            ({"stream": "s"}, TypeError, "stream holds a str, not an int"),
            ({"copy": "yes"}, TypeError, "copy is a bool or None; got 'yes'"),
            ({"copy": True}, BufferError, "copy=True is not supported"),
            ({"dl_device": (2, 0)}, BufferError,
             r"dl_device \(2, 0\) is not the tensor's device cpu"),
    ]:
        with pytest.raises(error, match="DLPackTensor.__dlpack__: " + message):
            exported.__dlpack__(**kwargs)
    np.testing.assert_allclose(np.from_dlpack(exported), x / (1 + np.exp(-x)), rtol=1e-6)
    assert exported.__dlpack__(max_version=(1, 0), dl_device=(1, 0), copy=False) is not None


def test_in_place_writes_bump_torch_version_counters_as_torch_in_place_ops_do():
    torch = pytest.importorskip("torch")
    rope = tileops.RopeFwdOp()
    weight = torch.randn(2, 1, 4, requires_grad=True)
    query, key = torch.randn(2, 1, 4), torch.randn(2, 1, 4)
    loss = (weight * query).sum()  # autograd saves query
    rope(torch.tensor([1, 2]), query, key, torch.randn(4, 4))  # the fast path
    assert (query._version, key._version) == (1, 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()  # it would have read the rotated query
    rope(positions=torch.tensor([0, 1]), query=query, key=key,
         cos_sin_cache=torch.randn(4, 4))  # the general path
    assert (query._version, key._version) == (2, 2)
    out = torch.empty(3)
    tileops.SiluFwdOp()(torch.randn(3), out=out)
    assert out._version == 1


def test_a_read_only_array_is_not_written():
    query = np.ones((1, 1, 4), np.float32)
    query.flags.writeable = False
    with pytest.raises(tileops.CheckError, match="query is written but read-only"):
        tileops.RopeFwdOp()(np.zeros(1, np.int64), query, np.ones((1, 1, 4), np.float32),
                            np.ones((1, 4), np.float32))


def test_wrong_arguments_are_python_type_errors():
    with pytest.raises(TypeError):
        tileops.RMSNormFwdOp()  # normalized_shape is required
    with pytest.raises(TypeError):
        tileops.RMSNormFwdOp([8], epsilon=1e-6)
    with pytest.raises(TypeError, match="has no __dlpack__"):
        tileops.SiluFwdOp()([1.0, 2.0])
    with pytest.raises(tileops.CheckError, match="approximate"):
        tileops.GeluFwdOp(approximate="exact")


def test_an_int_param_past_int64_is_a_check_error_naming_it():
    with pytest.raises(tileops.CheckError,
                       match="SoftmaxFwdOp param dim: 1180591620717411303424 is past the range of "
                             "int64"):
        tileops.SoftmaxFwdOp(dim=2**70)
    with pytest.raises(tileops.CheckError,
                       match="RMSNormFwdOp param normalized_shape: -9223372036854775809 is past"):
        tileops.RMSNormFwdOp([64, -2**63 - 1])
    # Its extremes are values like any other, for the op's own checks.
    with pytest.raises(tileops.CheckError, match="may not be negative"):
        tileops.RMSNormFwdOp([-2**63])


def test_numpy_scalars_are_params_as_the_python_numbers_they_hold():
    x = np.random.default_rng(5).random((3, 16), dtype=np.float32)
    by_numpy = tileops.RMSNormFwdOp([np.int64(16)], eps=np.float32(0.5))
    by_python = tileops.RMSNormFwdOp([16], eps=float(np.float32(0.5)))
    assert by_numpy.params == by_python.params
    np.testing.assert_array_equal(by_numpy(x), by_python(x))
    total = tileops.SumFwdOp(dim=[np.int32(1)], keepdim=np.True_)(x)
    np.testing.assert_allclose(total, x.sum(1, keepdims=True, dtype=np.float64), rtol=1e-6)
    assert tileops.SoftmaxFwdOp(dim=np.int16(-1)).params["dim"] == -1
    with pytest.raises(tileops.CheckError,
                       match="SoftmaxFwdOp param dim: 18446744073709551615 is past the range"):
        tileops.SoftmaxFwdOp(dim=np.uint64(2**64 - 1))
    with pytest.raises(TypeError, match="a list of bools is not a param value"):
        tileops.SumFwdOp(dim=[np.True_])


def test_a_dtype_param_takes_a_frameworks_dtype_object():
    for given in (np.float16, np.dtype("float16"), "float16"):
        op = tileops.AlibiFwdOp(num_heads=2, seq_len=3, out_dtype=given, device="cpu")
        assert op.params["out_dtype"] == "float16"
        assert op().dtype == np.float16
    torch = pytest.importorskip("torch")
    op = tileops.AlibiFwdOp(num_heads=2, seq_len=3, out_dtype=torch.bfloat16, device="cpu")
    assert op.params["out_dtype"] == "bfloat16"


def test_values_no_param_takes_are_errors_naming_the_param():
    with pytest.raises(TypeError, match="SoftmaxFwdOp param dim: a type is not a param value"):
        tileops.SoftmaxFwdOp(dim=int)
    with pytest.raises(tileops.CheckError,
                       match="GeluFwdOp param approximate: '\\\\ud800' is not a string of "
                             "characters UTF-8 can hold"):
        tileops.GeluFwdOp(approximate="\ud800")


def test_a_docstring_names_the_reference_api_where_the_entry_has_one():
    assert tileops.SiluFwdOp.__doc__.startswith(
        "SiluFwdOp (activation family), as torch.nn.functional.silu.")
    assert tileops.AlibiFwdOp.__doc__.startswith("AlibiFwdOp (attention family).\n")


def test_the_error_classes_derive_from_the_builtins():
    assert issubclass(tileops.ContractError, TypeError)
    assert issubclass(tileops.ContractError, ValueError)
    assert issubclass(tileops.OpNotAvailableError, NotImplementedError)
    assert issubclass(tileops.RuntimeStateError, RuntimeError)


def test_last_call_roofline_params_and_target():
    op = tileops.RMSNormFwdOp([16])
    with pytest.raises(tileops.RuntimeStateError, match="no call has completed yet"):
        op.last_call
    op(np.ones((4, 16), np.float32), np.ones(16, np.float32))
    record = op.last_call
    assert record["op"] == "RMSNormFwdOp" and record["device"] == "cpu"
    assert record["tensors"]["x"] == {"present": True, "shape": (4, 16), "dtype": "float32"}
    assert record["tensors"]["output"]["shape"] == (4, 16)
    assert record["indices"]["B"] == (4,)
    assert op.eval_roofline() == {"flops": 4 * 4 * 16, "bytes": 2 * 4 * 16 * 4 + 16 * 4}
    assert op.params == {"normalized_shape": (16,), "eps": None}
    assert op.serving_target == "BUILTIN"
    assert any("rms_norm" in line for line in op.explain(np.ones((4, 16), np.float32)))


def test_concurrent_calls_from_threads():
    op = tileops.SiluAndMulFwdOp()
    x = rng(10).standard_normal((64, 256)).astype(np.float32)
    want = op(x)
    results, errors = [], []

    def work():
        try:
            for _ in range(50):
                results.append(op(x))
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert len(results) == 200
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_torch_tensors_come_back_as_torch_tensors():
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 64, dtype=torch.bfloat16)
    w = torch.randn(64, dtype=torch.bfloat16)
    y = tileops.RMSNormFwdOp([64], eps=1e-6)(x, w)
    assert isinstance(y, torch.Tensor) and y.dtype == torch.bfloat16
    want = rms_norm_oracle(x.double().numpy(), w.double().numpy(), 1e-6)
    np.testing.assert_allclose(y.double().numpy(), want, rtol=2.0 ** -7, atol=1e-5)
    out = torch.empty(3, 64, dtype=torch.bfloat16)
    assert tileops.RMSNormFwdOp([64])(x, w, out=out) is out


def test_torch_calls_take_the_fast_path_and_anything_else_the_general_one():
    # Note [The torch fast path] in python/src/ops.cpp: call_torch serves the usual torch call in
    # one crossing and returns NotImplemented for what the general path must serve.
    torch = pytest.importorskip("torch")
    g = torch.Generator().manual_seed(11)
    x, w = torch.randn(5, 96, generator=g), torch.randn(96, generator=g)
    want = rms_norm_oracle(x.double().numpy(), w.double().numpy(), 1e-6)
    op = tileops.RMSNormFwdOp([96], eps=1e-6)
    y = op._op.call_torch((x, w), None)
    assert isinstance(y, torch.Tensor)
    np.testing.assert_allclose(y.double().numpy(), want, rtol=1e-5, atol=1e-6)
    out = torch.full((5, 96), float("nan"))
    assert op._op.call_torch((x, w), out) is out
    np.testing.assert_allclose(out.double().numpy(), want, rtol=1e-5, atol=1e-6)
    assert op.last_call["has_out"]
    # Optional inputs left out by position: the weight defaults to None.
    np.testing.assert_allclose(op._op.call_torch((x,), None).double().numpy(),
                               want / w.double().numpy(), rtol=1e-5, atol=1e-6)
    # Two outputs (a composite) come back as the general path returns them, a tuple.
    residual = torch.randn(5, 96, generator=g)
    composite = tileops.ResidualRMSNormFwdOp([96], eps=1e-6)
    fast = composite(x, residual, w)
    general = composite(x.numpy(), residual.numpy(), w.numpy())
    assert isinstance(fast, tuple) and len(fast) == len(general) == 2
    for f, n in zip(fast, general):
        assert isinstance(f, torch.Tensor)
        np.testing.assert_array_equal(f.numpy(), n)
    # An op with no outputs returns None; its inputs are written in place, as the general path.
    rope = tileops.RopeFwdOp(is_neox=True)
    positions = torch.arange(3, dtype=torch.int64)
    query, key = torch.randn(3, 2, 16, generator=g), torch.randn(3, 1, 16, generator=g)
    cache = torch.randn(8, 16, generator=g)
    q_numpy, k_numpy = query.numpy().copy(), key.numpy().copy()
    assert rope(positions, query, key, cache) is None
    rope(positions.numpy(), q_numpy, k_numpy, cache.numpy())
    np.testing.assert_array_equal(query.numpy(), q_numpy)
    np.testing.assert_array_equal(key.numpy(), k_numpy)
    # The general path's cases.
    declined = [((x.numpy(), w.numpy()), None),                    # NumPy arrays
                ((x.requires_grad_(True), w), None),                 # a tensor needing a gradient
                ((), None),                                          # too few inputs
                ((x.detach(), w, w, w), None)]                       # too many
    for args, out_arg in declined:
        assert op._op.call_torch(args, out_arg) is NotImplemented
    # out= where the entry has no buffer output: the general path's TypeError.
    assert rope._op.call_torch((positions, query, key, cache), torch.empty(3)) is NotImplemented
    with pytest.raises(TypeError):
        rope(positions, query, key, cache, out=torch.empty(3))
    # The library's errors are raised as on the general path.
    with pytest.raises(ValueError, match="RMSNormFwdOp: x dtype is outside"):
        op._op.call_torch((torch.ones(5, 96, dtype=torch.int32), w), None)
    # Tensors the library cannot view (a dtype it lacks, the meta device) raise the general path's
    # errors; the torch bridge (Note [The torch bridge]), when loaded, declines them to it.
    from tileops import _torch
    with pytest.raises(tileops.DLPackError, match="unsupported dtype"):
        op(torch.zeros(5, 96, dtype=torch.complex64), w)
    with pytest.raises(BufferError, match="meta"):
        op(torch.zeros(5, 96, device="meta"), w)
    if _torch.cpp_kernel:
        assert op._op.call_torch((torch.zeros(5, 96, dtype=torch.complex64), w),
                                 None) is NotImplemented


def test_inputs_by_position_or_by_name_take_the_fast_path_and_bad_arguments_raise_type_error():
    # The generated __call__ has the entry's own parameters (tileops/_classes.py, _make_call): a
    # call by name crosses into C++ once, as one by position does, and Python's TypeError names
    # the op and the argument.
    torch = pytest.importorskip("torch")
    op = tileops.RMSNormFwdOp([16], eps=1e-6)
    assert str(inspect.signature(op)) == "(x, weight=None, *, out=None)"
    crossed = []
    call_torch = op._call_torch

    def counting(args, out):
        crossed.append(len(args))
        return call_torch(args, out)

    op._call_torch = counting
    g = torch.Generator().manual_seed(5)
    x, w = torch.randn(3, 16, generator=g), torch.randn(16, generator=g)
    want = rms_norm_oracle(x.double().numpy(), w.double().numpy(), 1e-6)
    out = torch.full((3, 16), float("nan"))
    for result in (op(x, w), op(x=x, weight=w), op(x, weight=w, out=out)):
        np.testing.assert_allclose(result.double().numpy(), want, rtol=1e-5, atol=1e-6)
    assert crossed == [2, 2, 2]
    with pytest.raises(TypeError, match=r"RMSNormFwdOp.__call__\(\) got an unexpected keyword "
                                        r"argument 'bias'"):
        op(x, w, bias=w)
    with pytest.raises(TypeError, match=r"RMSNormFwdOp.__call__\(\) missing 1 required "
                                        r"positional argument: 'x'"):
        op(weight=w)
    with pytest.raises(TypeError, match="RMSNormFwdOp.__call__"):
        op(x, w, w)
    assert crossed == [2, 2, 2]  # none of the bad calls reached C++


def test_input_names_that_cannot_be_parameters_keep_a_generic_call():
    # _make_call's fallback for names such as a Python keyword: *args and **kwargs, the fast path
    # for inputs by position only.
    from tileops import _classes
    seen = []

    class Instance:
        def _call_torch(self, args, out):
            seen.append(("fast", args, out))
            return NotImplemented if args == ("declined",) else "fast"

    def general(self, args, out, kwargs):
        seen.append(("general", args, out, kwargs))
        return "general"

    call = _classes._make_call(["lambda", "x"], 2, True, None, general)
    assert str(inspect.signature(call)) == "(self, *args, out=None, **kwargs)"
    assert call(Instance(), 1, 2, out=3) == "fast"
    assert call(Instance(), "declined") == "general"
    assert call(Instance(), 1, x=2) == "general"
    assert seen == [("fast", (1, 2), 3), ("fast", ("declined",), None),
                    ("general", ("declined",), None, {}), ("general", (1,), None, {"x": 2})]


def test_an_op_made_before_torch_is_registered_takes_the_general_path_first():
    import subprocess
    import sys
    import textwrap

    # A fresh interpreter: tileops imported (and the op made) before torch.
    script = textwrap.dedent("""
        import tileops
        op = tileops.SiluFwdOp()
        import torch
        x = torch.randn(7)
        assert op._op.call_torch((x,), None) is NotImplemented  # not reachable yet
        y = op(x)                                              # the general path registers it
        from tileops import _torch
        assert op._key in _torch._instances
        z = op._op.call_torch((x,), None)
        assert isinstance(z, torch.Tensor) and torch.equal(y, z)
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith("ok")


def test_a_target_written_in_python_serves_an_op():
    built = []

    def build(inputs, params):
        built.append((inputs, params))

        def kernel(arrays, out):
            x = np.from_dlpack(arrays[0])
            return [(x.astype(np.float64) * 3 + 1).astype(x.dtype)]

        return kernel

    tileops.register_kernel_builder("SiluFwdOp", "python_test_target", build)
    op = tileops.SiluFwdOp(target="python_test_target")
    x = rng(11).standard_normal((2, 5)).astype(np.float32)
    np.testing.assert_allclose(op(x), x * 3 + 1, rtol=1e-6)
    assert op.serving_target == "python_test_target"
    assert built == [([{"shape": (2, 5), "dtype": "float32", "device": "cpu"}], {})]
    # The signature still checks the target's output: a wrong shape is the library's error.
    tileops.register_kernel_builder(
        "MulFwdOp", "python_test_target", lambda inputs, params: lambda arrays, out: [
            np.zeros((1,), np.float32)])
    with pytest.raises(tileops.CheckError, match="MulFwdOp: output output has shape \\[1\\]"):
        tileops.MulFwdOp(target="python_test_target")(x, x)


def test_a_python_target_serves_out_by_writing_the_buffer_it_was_given():
    def build(inputs, params):
        def kernel(arrays, out):
            x = np.from_dlpack(arrays[0])
            if out is None:
                return [x * 2]
            np.from_dlpack(out)[...] = x * 2
            return [out]  # the buffer as it came; an array over it (below) serves as well

        return kernel

    tileops.register_kernel_builder("SiluFwdOp", "python_out_target", build)
    op = tileops.SiluFwdOp(target="python_out_target")
    x = rng(12).standard_normal((2, 3)).astype(np.float32)
    out = np.zeros((2, 3), np.float32)
    assert op(x, out=out) is out
    np.testing.assert_array_equal(out, x * 2)

    def build_array(inputs, params):
        def kernel(arrays, out):
            y = np.from_dlpack(out)
            y[...] = np.from_dlpack(arrays[0]) + 1
            return [y]

        return kernel

    tileops.register_kernel_builder("GeluFwdOp", "python_out_target", build_array)
    out = np.zeros((2, 3), np.float32)
    assert tileops.GeluFwdOp(target="python_out_target")(x, out=out) is out
    np.testing.assert_array_equal(out, x + 1)
    # A kernel that returns no list breaks the target's contract.
    tileops.register_kernel_builder("SiluFwdOp", "python_none_target",
                                    lambda inputs, params: lambda arrays, out: None)
    with pytest.raises(tileops.ContractError,
                       match="SiluFwdOp: the output of target python_none_target's kernel is a "
                             "NoneType, not a list of arrays"):
        tileops.SiluFwdOp(target="python_none_target")(x)


def test_a_python_target_sees_the_inputs_its_op_does_not_write_read_only():
    def build(inputs, params):
        def kernel(arrays, out):
            x = np.from_dlpack(arrays[0])
            x[...] = -1  # SiluFwdOp does not write x
            return [x * 1]

        return kernel

    tileops.register_kernel_builder("SiluFwdOp", "python_writing_target", build)
    x = np.ones(3, np.float32)
    with pytest.raises(ValueError, match="read-only"):
        tileops.SiluFwdOp(target="python_writing_target")(x)
    np.testing.assert_array_equal(x, np.ones(3, np.float32))
    with pytest.raises(tileops.CheckError,
                       match="register_kernel_builder: no op class is named NoSuchFwdOp"):
        tileops.register_kernel_builder("NoSuchFwdOp", "python_writing_target", build)


def test_an_exception_in_a_python_target_reaches_the_caller():
    def build(inputs, params):
        def kernel(arrays, out):
            raise KeyError("from the python kernel")
        return kernel

    tileops.register_kernel_builder("GeluFwdOp", "python_failing_target", build)
    op = tileops.GeluFwdOp(target="python_failing_target")
    with pytest.raises(KeyError, match="from the python kernel"):
        op(np.ones(3, np.float32))


def test_jax_arrays_come_back_as_jax_arrays_and_are_never_written():
    jnp = pytest.importorskip("jax.numpy")
    x = jnp.asarray(rng(12).standard_normal((3, 32)), dtype=jnp.float32)
    w = jnp.asarray(rng(13).standard_normal(32), dtype=jnp.float32)
    y = tileops.RMSNormFwdOp([32], eps=1e-6)(x, w)
    assert type(y).__module__.startswith("jax")
    np.testing.assert_allclose(np.asarray(y), rms_norm_oracle(np.asarray(x), np.asarray(w), 1e-6),
                               rtol=1e-5, atol=1e-6)
    # JAX arrays are immutable: an op that would write one refuses, and the array is unchanged.
    query = jnp.ones((1, 1, 4), jnp.float32)
    with pytest.raises(tileops.CheckError, match="RopeFwdOp: query is written but read-only"):
        tileops.RopeFwdOp()(jnp.zeros(1, jnp.int32), query, jnp.ones((1, 1, 4), jnp.float32),
                            jnp.ones((1, 4), jnp.float32))
    assert np.asarray(query).tolist() == [[[1.0, 1.0, 1.0, 1.0]]]
