list(APPEND VF_SOURCES passes/bookend.cpp)
