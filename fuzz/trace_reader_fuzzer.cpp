// libFuzzer target for the trace reader: any input either reads or throws TraceError (never
// another exception, a crash or a sanitizer report), and what reads prints back to a trace that
// reads again to the same text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/error.h"
#include "frontend/trace_reader.h"
#include "ir/print_trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string printed;
  try {
    const vf::Fusion fusion = vf::read_trace(text, "fuzz");
    printed = vf::print_trace(fusion);
  } catch (const vf::TraceError&) {
    return 0;  // rejected with a file, line and column: the expected outcome for most inputs
  }
  // A trace that read must round-trip through the printer.
  try {
    const vf::Fusion again = vf::read_trace(printed, "printed");
    if (vf::print_trace(again) != printed) {
      std::fprintf(stderr, "round trip changed the trace:\n%s\n", printed.c_str());
      std::abort();
    }
  } catch (const vf::TraceError& e) {
    std::fprintf(stderr, "the printed trace does not read back: %s\n%s\n", e.what(), printed.c_str());
    std::abort();
  }
  return 0;
}
