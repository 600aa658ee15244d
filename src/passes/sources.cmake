list(APPEND VF_SOURCES passes/bookend.cpp)
list(APPEND VF_SOURCES passes/split_reductions.cpp)
