// device_launch_parameters.h (cudalab CPU mode): threadIdx and friends live
// in simt/device.h.
#pragma once
#include "simt/device.h"
