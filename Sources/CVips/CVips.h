#include <vips/vips.h>
// Not in vips.h: for `vips_vector_isenabled` (Orc is turned off at start, see CVipsShims.c).
#include <vips/vector.h>
