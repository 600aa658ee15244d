list(APPEND VF_SOURCES base/error.cpp base/dtype.cpp base/scalar.cpp base/half.cpp)
