// Sanitizer defaults for the tests that allocate on purpose more memory than any machine has: a
// huge allocation must fail (and viewfuse report it), not abort the sanitizer runtime.
extern "C" const char* __asan_default_options() { return "allocator_may_return_null=1"; }
extern "C" const char* __tsan_default_options() { return "allocator_may_return_null=1"; }
