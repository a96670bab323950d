// The shims are declarations of Swift runtime functions (see the header); this file gives the
// target something to compile.
#include "OperationsRuntimeShims.h"
