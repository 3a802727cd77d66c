// Why this file exists: SwiftPM links each executable with `--defsym main=<module>_main` and
// compiles its main.swift with that entry point name, so that tests can link executables. Under
// scripts/fuzz the main.swift files are compiled with `-parse-as-library` (they only declare
// `LLVMFuzzerTestOneInput`), so no `<module>_main` exists and the link fails. These weak
// definitions stand in then and start libFuzzer's driver, which -sanitize=fuzzer links whole.
// In an ordinary build each executable's own (empty) Swift entry point is a strong definition and
// wins, and the weak reference to LLVMFuzzerRunDriver stays unresolved and unused.
#include <stddef.h>
#include <stdint.h>

extern int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*callback)(const uint8_t *data, size_t size)) __attribute__((weak));
extern int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) __attribute__((weak));

#define FUZZ_ENTRY(name) \
    __attribute__((weak)) int name(int argc, char **argv) { return LLVMFuzzerRunDriver(&argc, &argv, LLVMFuzzerTestOneInput); }

FUZZ_ENTRY(fuzz_netlink_main)
FUZZ_ENTRY(fuzz_config_main)
FUZZ_ENTRY(fuzz_http_response_main)
FUZZ_ENTRY(fuzz_grpc_health_main)
FUZZ_ENTRY(fuzz_event_stream_main)
FUZZ_ENTRY(fuzz_captive_portal_main)
FUZZ_ENTRY(fuzz_history_query_main)
FUZZ_ENTRY(fuzz_documents_main)
FUZZ_ENTRY(fuzz_status_api_main)
FUZZ_ENTRY(fuzz_dns_message_main)
FUZZ_ENTRY(fuzz_http_response_reader_main)
