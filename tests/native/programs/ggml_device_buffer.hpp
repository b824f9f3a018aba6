// A ggml buffer type that stands in for device memory on a machine without
// one: its tensors' data pointers lie in address space mapped with no access
// at all, and their bytes live in a separate host block that only the
// buffer's get/set/memset/clear functions reach, as a CUDA buffer's do. A
// caller that reads or writes a tensor through t->data instead of
// ggml_backend_tensor_get/set crashes on the spot. ggml_backend_buffer_is_host
// says false, so the ggml adapter takes its device path.
//
// Needs ggml's internal ggml-backend-impl.h (ggml/src of the same llama.cpp).
#pragma once

#include <ggml-backend-impl.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace fake_device {

struct Memory {
  void* base;            // what tensors point into: no access
  unsigned char* bytes;  // the contents
  std::size_t size;
};

inline unsigned char* at(ggml_backend_buffer_t buffer, const ggml_tensor* t, std::size_t offset) {
  const Memory* m = static_cast<const Memory*>(buffer->context);
  return m->bytes + (static_cast<const unsigned char*>(t->data) - static_cast<const unsigned char*>(m->base)) + offset;
}

inline void free_buffer(ggml_backend_buffer_t buffer) {
  Memory* m = static_cast<Memory*>(buffer->context);
  munmap(m->base, m->size);
  std::free(m->bytes);
  delete m;
}
inline void* get_base(ggml_backend_buffer_t buffer) { return static_cast<Memory*>(buffer->context)->base; }
inline void memset_tensor(ggml_backend_buffer_t buffer, ggml_tensor* t, uint8_t value, size_t offset, size_t size) {
  std::memset(at(buffer, t, offset), value, size);
}
inline void set_tensor(ggml_backend_buffer_t buffer, ggml_tensor* t, const void* data, size_t offset, size_t size) {
  std::memcpy(at(buffer, t, offset), data, size);
}
inline void get_tensor(ggml_backend_buffer_t buffer, const ggml_tensor* t, void* data, size_t offset, size_t size) {
  std::memcpy(data, at(buffer, t, offset), size);
}
inline void clear(ggml_backend_buffer_t buffer, uint8_t value) {
  const Memory* m = static_cast<const Memory*>(buffer->context);
  std::memset(m->bytes, value, m->size);
}

inline const char* type_name(ggml_backend_buffer_type_t) { return "FakeDevice"; }
inline size_t alignment(ggml_backend_buffer_type_t) { return 64; }
inline bool is_host(ggml_backend_buffer_type_t) { return false; }

inline ggml_backend_buffer_t alloc_buffer(ggml_backend_buffer_type_t buft, size_t size) {
  void* base = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (base == MAP_FAILED) return nullptr;
  Memory* m = new Memory{base, static_cast<unsigned char*>(std::calloc(size, 1)), size};
  ggml_backend_buffer_i iface = {};
  iface.free_buffer = free_buffer;
  iface.get_base = get_base;
  iface.memset_tensor = memset_tensor;
  iface.set_tensor = set_tensor;
  iface.get_tensor = get_tensor;
  iface.clear = clear;
  return ggml_backend_buffer_init(buft, iface, m, size);
}

inline ggml_backend_buffer_type_t buffer_type() {
  static ggml_backend_buffer_type buft = [] {
    ggml_backend_buffer_type b = {};
    b.iface.get_name = type_name;
    b.iface.alloc_buffer = alloc_buffer;
    b.iface.get_alignment = alignment;
    b.iface.is_host = is_host;
    return b;
  }();
  return &buft;
}

}  // namespace fake_device
