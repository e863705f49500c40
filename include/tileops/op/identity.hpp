// Identity: a type-erased, hashable, comparable value. entry_for() returns one per build: two calls
// share an entry exactly when their identities are equal. Like call specs
// (Note [Call spec fields] in call_spec.hpp), identities are typed structs or scalars with == and
// a hash, never strings or raw bytes.
#pragma once

#include <concepts>
#include <cstddef>
#include <functional>
#include <memory>
#include <typeindex>
#include <utility>

namespace tileops {

// Comparable with == and hashed either by a hash() member (call specs) or by std::hash.
template <class T>
concept HasHashMember = requires(const T& a) {
  { a.hash() } -> std::convertible_to<std::size_t>;
};
template <class T>
concept Hashable = requires(const T& a, const T& b) {
  { a == b } -> std::convertible_to<bool>;
}
&&(HasHashMember<T> || requires(const T& a) {
  { std::hash<T>{}(a) } -> std::convertible_to<std::size_t>;
});

class Identity {
 public:
  Identity() = default;
  template <class T>
  requires(!std::same_as<std::decay_t<T>, Identity>) && Hashable<T> explicit Identity(T value)
      : holder_(std::make_shared<Holder<T>>(std::move(value))) {}

  std::size_t hash() const noexcept { return holder_ ? holder_->hash() : 0; }
  friend bool operator==(const Identity& a, const Identity& b) noexcept {
    if (!a.holder_ || !b.holder_) return !a.holder_ && !b.holder_;
    return a.holder_->type() == b.holder_->type() && a.holder_->equals(*b.holder_);
  }

 private:
  struct Base {
    virtual ~Base() = default;
    virtual std::size_t hash() const noexcept = 0;
    virtual std::type_index type() const noexcept = 0;
    virtual bool equals(const Base& other) const noexcept = 0;
  };
  template <class T>
  struct Holder final : Base {
    explicit Holder(T v) : value(std::move(v)) {}
    std::size_t hash() const noexcept override {
      if constexpr (HasHashMember<T>)
        return value.hash();
      else
        return std::hash<T>{}(value);
    }
    std::type_index type() const noexcept override { return typeid(T); }
    bool equals(const Base& other) const noexcept override {
      return value == static_cast<const Holder&>(other).value;
    }
    T value;
  };
  std::shared_ptr<const Base> holder_;
};

}  // namespace tileops

template <>
struct std::hash<tileops::Identity> {
  std::size_t operator()(const tileops::Identity& id) const noexcept { return id.hash(); }
};
