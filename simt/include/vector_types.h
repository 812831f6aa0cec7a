// vector_types.h (cudalab CPU mode): CUDA's built-in vector types, with
// CUDA's sizes and alignments (float2: 8 bytes, float4: 16), dim3, and the
// make_* functions of vector_functions.h.
#pragma once

#define SIMT_VEC1(T, N, A) \
  struct alignas(A) N##1 { \
    T x;                   \
  };
#define SIMT_VEC2(T, N, A) \
  struct alignas(A) N##2 { \
    T x, y;                \
  };
#define SIMT_VEC3(T, N) \
  struct N##3 {         \
    T x, y, z;          \
  };
#define SIMT_VEC4(T, N, A) \
  struct alignas(A) N##4 { \
    T x, y, z, w;          \
  };
#define SIMT_MAKE(T, N)                                   \
  inline constexpr N##1 make_##N##1(T x) {                \
    return N##1 {x};                                      \
  }                                                       \
  inline constexpr N##2 make_##N##2(T x, T y) {           \
    return N##2 {x, y};                                   \
  }                                                       \
  inline constexpr N##3 make_##N##3(T x, T y, T z) {      \
    return N##3 {x, y, z};                                \
  }                                                       \
  inline constexpr N##4 make_##N##4(T x, T y, T z, T w) { \
    return N##4 {x, y, z, w};                             \
  }
#define SIMT_VECS(T, N, A1, A2, A4) \
  SIMT_VEC1(T, N, A1) SIMT_VEC2(T, N, A2) SIMT_VEC3(T, N) SIMT_VEC4(T, N, A4) SIMT_MAKE(T, N)

SIMT_VECS(signed char, char, 1, 2, 4)
SIMT_VECS(unsigned char, uchar, 1, 2, 4)
SIMT_VECS(short, short, 2, 4, 8)
SIMT_VECS(unsigned short, ushort, 2, 4, 8)
SIMT_VECS(int, int, 4, 8, 16)
SIMT_VECS(unsigned int, uint, 4, 8, 16)
SIMT_VECS(long long, longlong, 8, 16, 16)
SIMT_VECS(unsigned long long, ulonglong, 8, 16, 16)
SIMT_VECS(float, float, 4, 8, 16)
SIMT_VECS(double, double, 8, 16, 16)

#undef SIMT_VEC1
#undef SIMT_VEC2
#undef SIMT_VEC3
#undef SIMT_VEC4
#undef SIMT_MAKE
#undef SIMT_VECS

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};
