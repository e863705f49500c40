"""Calls on CUDA arrays (Note [Python streams] in python/src/streams.cpp): torch CUDA tensors in and
out, outputs from torch's caching allocator, torch's current stream honoured, CUDA graph capture
and replay (direct and compiled), CuPy arrays, JAX arrays on the GPU. The oracle is float64
written here.

Without a CUDA device these tests skip, unless TILEOPS_REQUIRE_GPU=1, which makes them fail.
"""
import gc
import math
import os
import threading

import pytest

torch = pytest.importorskip("torch")

import tileops  # noqa: E402  (after torch: the torch allocator and operators come with it)

_required = os.environ.get("TILEOPS_REQUIRE_GPU", "") not in ("", "0")
_usable = torch.cuda.is_available() and tileops._C.built_with_cuda


@pytest.fixture(autouse=True)
def _needs_cuda():
    if not _usable:
        if _required:
            pytest.fail("TILEOPS_REQUIRE_GPU is set but torch or tileops sees no CUDA device")
        pytest.skip("no CUDA device, or tileops built without CUDA")


def rms_norm_float64(x, w, eps):
    x64, w64 = x.double(), w.double()
    scale = torch.rsqrt(x64.pow(2).mean(dim=-1, keepdim=True) + eps)
    return x64 * scale * w64


def assert_close_to(result, expected64, dtype):
    # One rounding to the dtype after float32 arithmetic (docs/manifest.md §4.1).
    tolerance = {torch.bfloat16: 1.6e-2, torch.float16: 2e-3, torch.float32: 1e-5}[dtype]
    assert result.dtype == dtype
    error = (result.double() - expected64).abs().max().item()
    assert error <= tolerance * max(1.0, expected64.abs().max().item()), error


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
def test_rms_norm_on_torch_cuda_tensors(dtype):
    op = tileops.RMSNormFwdOp([4096], eps=1e-6)
    x = torch.randn(33, 4096, device="cuda").to(dtype)
    w = torch.randn(4096, device="cuda").to(dtype)
    y = op(x, w)
    assert isinstance(y, torch.Tensor) and y.is_cuda and y.shape == x.shape
    assert_close_to(y, rms_norm_float64(x, w, 1e-6), dtype)
    out = torch.full_like(x, float("nan"))
    assert op(x, w, out=out) is out
    assert_close_to(out, rms_norm_float64(x, w, 1e-6), dtype)


def test_outputs_come_from_torchs_caching_allocator():
    op = tileops.RMSNormFwdOp([8192])
    x = torch.randn(512, 8192, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(8192, device="cuda", dtype=torch.bfloat16)
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    y = op(x, w)
    held = torch.cuda.memory_allocated() - before
    assert held >= y.numel() * y.element_size()
    del y
    gc.collect()
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before


def test_torchs_allocator_is_called_from_cpp_when_the_kernel_library_is_loaded():
    # The Python pair costs a GIL round trip a block (Note [torch's caching allocator from C++]).
    assert tileops._torch.cuda_allocator == ("c++" if tileops._torch.cpp_kernel else "python")


def test_an_output_released_on_another_thread_goes_back_to_torch():
    op = tileops.RMSNormFwdOp([4096])
    x = torch.randn(256, 4096, device="cuda")
    w = torch.randn(4096, device="cuda")
    torch.cuda.synchronize()
    before = torch.cuda.memory_allocated()
    outputs = [op(x, w) for _ in range(4)]
    assert torch.cuda.memory_allocated() - before >= 4 * outputs[0].numel() * 4
    releaser = threading.Thread(target=outputs.clear)
    releaser.start()
    releaser.join()
    gc.collect()
    torch.cuda.synchronize()
    assert torch.cuda.memory_allocated() == before


def test_an_allocation_torch_cannot_serve_raises_the_librarys_error():
    op = tileops.AddFwdOp()
    a = torch.randn(400_000, 1, device="cuda")
    b = torch.randn(1, 400_000, device="cuda")  # a 640 GB output
    with pytest.raises(Exception) as raised:
        op(a, b)
    if tileops._torch.cuda_allocator == "c++":
        assert raised.type is tileops.CudaError
        assert "could not allocate 640000000000 bytes on cuda:0" in str(raised.value)
    torch.cuda.synchronize()  # the device is still usable
    assert_close_to(op(a[:8], b[:, :8]), a[:8].double() + b[:, :8].double(), torch.float32)


def check_runs_on_a_busy_side_stream(call):
    """call(op, x, w) on a side stream that is busy, then rewrites x: a call ordered on another
    stream would read the old x."""
    op = tileops.RMSNormFwdOp([4096])
    x = torch.randn(64, 4096, device="cuda")
    w = torch.randn(4096, device="cuda")
    op(x, w)  # the class's operators exist
    fresh = torch.randn(64, 4096, device="cuda")
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        x.copy_(fresh)
        y = call(op, x, w)
    side.synchronize()
    assert_close_to(y, rms_norm_float64(fresh, w, torch.finfo(torch.float32).eps), torch.float32)


def test_the_call_runs_on_torchs_current_stream():
    check_runs_on_a_busy_side_stream(lambda op, x, w: op(x, w))


def test_the_operator_runs_on_torchs_current_stream():
    # The compile boundary's operator, called directly.
    check_runs_on_a_busy_side_stream(
        lambda op, x, w: torch.ops.tileops.norm_rms_norm_fwd.default(op._key, x, w))


def test_an_output_read_on_another_stream_waits_for_the_op():
    op = tileops.RMSNormFwdOp([4096])
    x = torch.randn(64, 4096, device="cuda")
    w = torch.randn(4096, device="cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        torch.cuda._sleep(50_000_000)
        result = op._op.call([x, w], None, torch.cuda.current_stream().cuda_stream or 1)[0]
    # Imported on the default stream: from_dlpack orders it after the side stream's work.
    y = torch.from_dlpack(result).clone()
    torch.cuda.synchronize()
    assert_close_to(y, rms_norm_float64(x, w, torch.finfo(torch.float32).eps), torch.float32)


def test_cuda_graph_capture_and_replay_of_a_direct_call():
    op = tileops.RMSNormFwdOp([2048], eps=1e-5)
    x = torch.randn(16, 2048, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(2048, device="cuda", dtype=torch.bfloat16)
    op(x, w)  # builds the entry outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = op(x, w)
    fresh = torch.randn(16, 2048, device="cuda", dtype=torch.bfloat16)
    x.copy_(fresh)
    graph.replay()
    torch.cuda.synchronize()
    assert_close_to(y, rms_norm_float64(fresh, w, 1e-5), torch.bfloat16)


def test_a_compiled_function_captured_in_a_cuda_graph():
    op = tileops.RMSNormFwdOp([1024], eps=1e-6)
    x = torch.randn(8, 1024, device="cuda", dtype=torch.float16)
    w = torch.randn(1024, device="cuda", dtype=torch.float16)
    torch._dynamo.reset()
    fn = torch.compile(lambda x, w: op(x, w) * 2, fullgraph=True)
    warm = fn(x, w)
    assert_close_to(warm, 2 * rms_norm_float64(x, w, 1e-6), torch.float16)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = fn(x, w)
    fresh = torch.randn(8, 1024, device="cuda", dtype=torch.float16)
    x.copy_(fresh)
    graph.replay()
    torch.cuda.synchronize()
    assert_close_to(y, 2 * rms_norm_float64(fresh, w, 1e-6), torch.float16)
    assert op.last_call["device"] == "cuda:0"


def test_cupy_arrays_in_and_out():
    cupy = pytest.importorskip("cupy")
    import numpy as np

    op = tileops.RMSNormFwdOp([256], eps=1e-6)
    rng = np.random.default_rng(7)
    x_host = rng.standard_normal((5, 256)).astype(np.float32)
    w_host = rng.standard_normal(256).astype(np.float32)
    y = op(cupy.asarray(x_host), cupy.asarray(w_host))
    assert isinstance(y, cupy.ndarray)
    x64, w64 = x_host.astype(np.float64), w_host.astype(np.float64)
    expected = x64 / np.sqrt((x64 ** 2).mean(axis=-1, keepdims=True) + 1e-6) * w64
    assert np.max(np.abs(cupy.asnumpy(y) - expected)) <= 1e-5 * max(1.0, np.abs(expected).max())


def test_jax_gpu_arrays_in_and_out():
    jax = pytest.importorskip("jax")
    import numpy as np

    try:
        gpu = jax.devices("gpu")[0]
    except RuntimeError:
        pytest.skip("this JAX has no GPU backend (jaxlib without its CUDA plugin)")
    op = tileops.RMSNormFwdOp([256], eps=1e-6)
    rng = np.random.default_rng(8)
    x_host = rng.standard_normal((5, 256)).astype(np.float32)
    w_host = rng.standard_normal(256).astype(np.float32)
    x, w = jax.device_put(x_host, gpu), jax.device_put(w_host, gpu)
    y = op(x, w)
    assert type(y).__module__.startswith("jax")
    assert y.devices() == {gpu}
    x64, w64 = x_host.astype(np.float64), w_host.astype(np.float64)
    expected = x64 / np.sqrt((x64 ** 2).mean(axis=-1, keepdims=True) + 1e-6) * w64
    assert np.max(np.abs(np.asarray(y) - expected)) <= 1e-5 * max(1.0, np.abs(expected).max())
    assert np.array_equal(np.asarray(x), x_host)  # the input is read, never written


def test_a_cuda_and_a_cpu_tensor_in_one_call_raise_the_ops_error():
    op = tileops.RMSNormFwdOp([64])
    with pytest.raises(tileops.CheckError, match=r"RMSNormFwdOp: needs every tensor on one device; got \[x on cuda:0, weight on cpu\]"):
        op(torch.randn(2, 64, device="cuda"), torch.randn(64))
    assert math.isfinite(op(torch.randn(2, 64, device="cuda"),
                            torch.randn(64, device="cuda")).sum().item())
