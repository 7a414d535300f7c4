#include "CVipsShims.h"
