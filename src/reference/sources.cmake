list(APPEND VF_SOURCES
  reference/reference_executor.cpp
  reference/elementwise.cpp
  reference/movement.cpp
  reference/reduction.cpp
  reference/creation.cpp
  reference/scatter.cpp
  reference/scan.cpp
  reference/matmul.cpp
  reference/erfinv.cpp
  reference/gamma.cpp
  reference/compare.cpp
  reference/random_inputs.cpp)
