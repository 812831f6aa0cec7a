// Host-only unit tests of the framework: no GPU needed.
#define CATCH_CONFIG_MAIN
#include "cudalab/catch.h"
