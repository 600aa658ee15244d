list(APPEND VF_SOURCES reference/reference_executor.cpp reference/compare.cpp reference/random_inputs.cpp)
