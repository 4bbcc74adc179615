// Argument checks shared by every N-API binding file: types, integer ranges, index contents and
// buffer lengths are verified before any kernel runs; failures throw a JavaScript TypeError naming
// the function and argument. Nothing here may exit or abort.
#pragma once
#include <napi.h>

#include <cmath>
#include <cstdint>
#include <string>

namespace maso {

struct Call {
  const Napi::CallbackInfo& info;
  const char* fn;

  [[noreturn]] void fail(int i, const std::string& name, const std::string& what) const {
    throw Napi::TypeError::New(info.Env(), std::string("maso native ") + fn + "(): argument " +
                                               std::to_string(i) + " '" + name + "' " + what +
                                               " [" + __FILE__ + "]");
  }

  // Checks of a value: argument i itself, or an element of an array argument i (named `name[k]`)
  double number(int i, const char* name) const { return number(info[i], i, name); }
  double number(const Napi::Value& v, int i, const std::string& name) const {
    if (!v.IsNumber()) fail(i, name, "must be a number");
    double x = v.As<Napi::Number>().DoubleValue();
    if (!std::isfinite(x)) fail(i, name, "must be finite");
    return x;
  }

  int64_t count(int i, const char* name) const { return count(info[i], i, name); }
  int64_t count(const Napi::Value& v, int i, const std::string& name) const {
    double x = number(v, i, name);
    if (x < 0 || x != std::floor(x) || x > 9.0e15) fail(i, name, "must be a non-negative integer");
    return (int64_t)x;
  }

  int dim(int i, const char* name) const { return dim(info[i], i, name); }
  int dim(const Napi::Value& v, int i, const std::string& name) const {
    int64_t x = count(v, i, name);
    if (x > 2147483647) fail(i, name, "exceeds int32 range");
    return (int)x;
  }

  // an Array of lo to hi elements
  Napi::Array list(int i, const char* name, int64_t lo, int64_t hi) const {
    if (!info[i].IsArray()) fail(i, name, "must be an array");
    Napi::Array a = info[i].As<Napi::Array>();
    const int64_t n = a.Length();
    if (n < lo || n > hi)
      fail(i, name, "has " + std::to_string(n) + " elements, needs " + std::to_string(lo) +
                        (hi > lo ? " to " + std::to_string(hi) : ""));
    return a;
  }

  bool flag(int i, const char* name) const {
    if (!info[i].IsBoolean()) fail(i, name, "must be a boolean");
    return info[i].As<Napi::Boolean>().Value();
  }

  bool isNull(int i) const { return info[i].IsNull() || info[i].IsUndefined(); }

  // A typed array of element T (kind `type`, JavaScript name `js`) with at least `need` elements
  template <typename T>
  T* floats(const Napi::Value& v, int i, const std::string& name, int64_t need, napi_typedarray_type type,
            const std::string& js, bool optional) const {
    if (optional && (v.IsNull() || v.IsUndefined())) return nullptr;
    if (!v.IsTypedArray() || v.As<Napi::TypedArray>().TypedArrayType() != type)
      fail(i, name, optional ? "must be a " + js + " or null" : "must be a " + js);
    auto a = v.As<Napi::TypedArrayOf<T>>();
    if ((int64_t)a.ElementLength() < need)
      fail(i, name, "has " + std::to_string(a.ElementLength()) + " elements, needs " + std::to_string(need));
    return a.Data();
  }

  float* f32(int i, const char* name, int64_t need, bool optional = false) const {
    return floats<float>(info[i], i, name, need, napi_float32_array, "Float32Array", optional);
  }
  float* f32(const Napi::Value& v, int i, const std::string& name, int64_t need, bool optional = false) const {
    return floats<float>(v, i, name, need, napi_float32_array, "Float32Array", optional);
  }

  double* f64(int i, const char* name, int64_t need) const {
    return floats<double>(info[i], i, name, need, napi_float64_array, "Float64Array", false);
  }

  // Int32Array of at least `need` values, each in [lo, hi)
  int32_t* i32(int i, const char* name, int64_t need, int64_t lo, int64_t hi) const {
    if (!info[i].IsTypedArray() ||
        info[i].As<Napi::TypedArray>().TypedArrayType() != napi_int32_array)
      fail(i, name, "must be an Int32Array");
    auto a = info[i].As<Napi::Int32Array>();
    if ((int64_t)a.ElementLength() < need)
      fail(i, name, "has " + std::to_string(a.ElementLength()) + " elements, needs " + std::to_string(need));
    int32_t* d = a.Data();
    for (int64_t k = 0; k < need; k++)
      if (d[k] < lo || d[k] >= hi)
        fail(i, name, "value " + std::to_string(d[k]) + " at index " + std::to_string(k) +
                          " is outside [" + std::to_string(lo) + ", " + std::to_string(hi) + ")");
    return d;
  }

  void arity(int n) const {
    if ((int)info.Length() != n)
      throw Napi::TypeError::New(info.Env(), std::string("maso native ") + fn + "(): expected " +
                                                 std::to_string(n) + " arguments, got " +
                                                 std::to_string(info.Length()));
  }
};

}  // namespace maso
