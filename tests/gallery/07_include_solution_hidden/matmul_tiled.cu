// Rogues' gallery: lab 3 is nothing but the course's own solution, #included
// through a computed include whose path is pasted together by macros, so that
// neither "solutions" nor "matmul_tiled.cu" appears next to the #include. In
// the grading build the path resolves through -I <source>/harness/include.
#define CAT(a, b) a##b
#define STR2(x) #x
#define STR(x) STR2(x)
#define MY_KERNEL STR(../../CAT(solu, tions)/03_tiling/CAT(matmul_, tiled).cu)
#include MY_KERNEL
