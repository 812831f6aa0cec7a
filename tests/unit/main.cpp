// Host-only unit tests of the framework: no GPU needed. (With Catch2 v3 the
// main comes from the Catch2WithMain library instead.)
#define CATCH_CONFIG_MAIN
#include "cudalab/catch.h"
