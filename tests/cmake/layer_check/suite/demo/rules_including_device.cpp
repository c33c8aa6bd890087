#include "demo/device.hpp"
int rule() { return device_count(); }
