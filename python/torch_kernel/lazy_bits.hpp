// torch's lazy bits: a tensor whose negative or conjugate bit is set is a view whose memory holds
// its values negated or conjugated (z.conj().imag is one), and torch's DLPack export hands it out
// as if the bit were unset. The library reads memory as values, so it refuses such a tensor, with
// these reasons, on every path a torch tensor takes: the extension's DLPack import
// (python/src/arrays.cpp) and the views of the torch kernel library (torch_tensors.cpp). Plain
// C++: the extension does not link torch.
#pragma once

namespace tileops::torch_kernel {

inline constexpr const char* kNegativeBit =
    "torch's negative bit set (a lazily negated view, as z.conj().imag): its memory holds the "
    "values negated; resolve_neg() gives a tensor the library can take";
inline constexpr const char* kConjugateBit =
    "torch's conjugate bit set (a lazily conjugated view): its memory holds the values "
    "conjugated; resolve_conj() gives a tensor the library can take";

}  // namespace tileops::torch_kernel
