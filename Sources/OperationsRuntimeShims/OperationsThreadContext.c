// The calling thread's context pointer (see the header).
#include "OperationsRuntimeShims.h"

__thread void *operations_thread_context_storage = NULL;
