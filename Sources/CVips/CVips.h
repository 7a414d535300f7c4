#include <vips/vips.h>
// Not in vips.h: for `vips_vector_isenabled`, whether Orc (run-time SIMD) is on: with liborc 0.4.34
// or later, or an older one whose compile and free calls are serialised; off otherwise (CVipsShims.c).
#include <vips/vector.h>
