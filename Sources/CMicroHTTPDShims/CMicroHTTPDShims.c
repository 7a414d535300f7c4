#include "CMicroHTTPDShims.h"
