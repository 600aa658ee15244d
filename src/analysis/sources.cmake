list(APPEND VF_SOURCES analysis/alias_analysis.cpp)
