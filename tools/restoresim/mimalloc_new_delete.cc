// The binary's operator new and delete, from mimalloc (meson option allocator=mimalloc, the
// sweep binary of tools/build-fast): the simulator allocates and frees small objects at every
// step, and mimalloc's thread-local free lists cost less than glibc's malloc for it. Replacing
// the global operators is standard C++ ([replacement.functions]): one definition in the
// program, used by every library of the process that allocates through operator new. The C
// library's malloc stays the process's malloc (a build that made mimalloc's the malloc too got
// a profile GCC could not use: tools/build-fast).
//
// Kafka counterpart: none (a build choice).
#include <mimalloc-new-delete.h>
