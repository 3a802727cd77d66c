// The fuzz executables' entry points under libFuzzer: see fuzzer_entry.c. Nothing here to call
// from Swift; the header makes the module the executables import so that they link its object.
#ifndef CFUZZER_ENTRY_H
#define CFUZZER_ENTRY_H
#endif
