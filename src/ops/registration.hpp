// The registration of the library's op classes, generated from the manifest (tileops_opgen
// writes one register_<family>_op_classes() per family and this function, which calls them all).
#pragma once

namespace tileops::ops {

void register_generated_op_classes();

}  // namespace tileops::ops
