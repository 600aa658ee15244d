list(APPEND VF_SOURCES ir/op_info.cpp ir/fusion.cpp ir/infer_types.cpp ir/verify.cpp ir/print_trace.cpp ir/check_input.cpp)
