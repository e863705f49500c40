#include "tileops/core/stream.hpp"

#include <algorithm>
#include <vector>

namespace tileops {

namespace {

// A thread touches streams of a handful of devices, so a flat list beats a hash map; only
// devices whose stream was set appear in it.
std::vector<Stream>& current_streams() {
  thread_local std::vector<Stream> streams;
  return streams;
}

}  // namespace

Stream current_stream(Device device) {
  const std::vector<Stream>& streams = current_streams();
  auto it = std::find_if(streams.begin(), streams.end(),
                         [&](const Stream& s) { return s.device() == device; });
  return it != streams.end() ? *it : Stream::default_for(device);
}

void set_current_stream(const Stream& stream) {
  std::vector<Stream>& streams = current_streams();
  auto it = std::find_if(streams.begin(), streams.end(),
                         [&](const Stream& s) { return s.device() == stream.device(); });
  if (it != streams.end()) {
    *it = stream;
  } else {
    streams.push_back(stream);
  }
}

StreamGuard::StreamGuard(const Stream& stream) : original_(current_stream(stream.device())) {
  set_current_stream(stream);
}

StreamGuard::~StreamGuard() {
  // The slot for this device exists (the constructor made it), so restoring never allocates
  // and so never throws.
  set_current_stream(original_);
}

}  // namespace tileops
