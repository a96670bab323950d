#ifndef OPERATIONS_RUNTIME_SHIMS_H
#define OPERATIONS_RUNTIME_SHIMS_H

/// The Swift runtime's conditional retain: retains `object` and returns it, unless the object's
/// deinitialization has begun (then it returns NULL and changes nothing). Part of the Swift
/// runtime's exported interface on every platform; declared here, with the C calling convention
/// the runtime defines it with, because Swift code may not name runtime symbols itself. Used by `DependentLink` in the `Operations` module.
extern void *_Nullable swift_tryRetain(void *_Nonnull object);

#endif
