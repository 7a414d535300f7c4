#pragma once
#include <vips/vips.h>
