# viewfuse._torch_fast (src/torch_fast.cpp, one translation unit), compiled against the headers and
# linked against the libraries of a torch package, found without importing torch.
#   VF_PYTHON_TORCH  AUTO: build it when torch is found (default); ON: fail without torch; OFF: never.
#   VF_TORCH_DIR     the torch package directory (version.py, include/, lib/); default: where
#                    ${Python_EXECUTABLE} finds torch. Another Python's torch of the same version works.
# The version in version.py is compiled into the module and written to _torch_fast_build.py;
# viewfuse/_torch_path.py loads the module only under that same torch version.
set(VF_PYTHON_TORCH AUTO CACHE STRING "Build viewfuse._torch_fast: AUTO (when torch is found), ON or OFF")
set_property(CACHE VF_PYTHON_TORCH PROPERTY STRINGS AUTO ON OFF)
set(VF_TORCH_DIR "" CACHE PATH "The torch package directory viewfuse._torch_fast is built against")
if(VF_PYTHON_TORCH STREQUAL "OFF")
  message(STATUS "viewfuse._torch_fast: not built (VF_PYTHON_TORCH=OFF)")
  return()
endif()

set(torch_dir "${VF_TORCH_DIR}")
if(NOT torch_dir)
  execute_process(
    COMMAND "${Python_EXECUTABLE}" -c
            "import importlib.util as u; s = u.find_spec('torch'); print(s.submodule_search_locations[0] if s else '')"
    OUTPUT_VARIABLE torch_dir OUTPUT_STRIP_TRAILING_WHITESPACE)
endif()
set(torch_missing "")
set(torch_libs "")
if(NOT torch_dir)
  set(torch_missing "no torch package for ${Python_EXECUTABLE} (VF_TORCH_DIR names one)")
elseif(NOT EXISTS "${torch_dir}/version.py")
  set(torch_missing "${torch_dir} is not a torch package (no version.py)")
elseif(NOT EXISTS "${torch_dir}/include/torch/csrc/autograd/python_variable.h")
  set(torch_missing "${torch_dir} has no C++ headers")
else()
  foreach(lib torch_python torch torch_cpu c10)
    if(EXISTS "${torch_dir}/lib/lib${lib}.so")
      list(APPEND torch_libs "${torch_dir}/lib/lib${lib}.so")
    else()
      set(torch_missing "${torch_dir}/lib has no lib${lib}.so")
    endif()
  endforeach()
endif()
if(torch_missing)
  if(VF_PYTHON_TORCH STREQUAL "ON")
    message(FATAL_ERROR "viewfuse._torch_fast (VF_PYTHON_TORCH=ON): ${torch_missing}")
  endif()
  message(STATUS "viewfuse._torch_fast: not built: ${torch_missing}")
  return()
endif()
file(STRINGS "${torch_dir}/version.py" version_line REGEX "^__version__ = ")
string(REGEX REPLACE "^__version__ = '([^']+)'.*$" "\\1" VF_TORCH_VERSION "${version_line}")
message(STATUS "viewfuse._torch_fast: against torch ${VF_TORCH_VERSION} in ${torch_dir}")

Python_add_library(_torch_fast MODULE WITH_SOABI src/torch_fast.cpp)
target_include_directories(_torch_fast PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_include_directories(_torch_fast SYSTEM PRIVATE "${torch_dir}/include")
target_compile_definitions(_torch_fast PRIVATE VF_TORCH_VERSION="${VF_TORCH_VERSION}")
target_link_libraries(_torch_fast PRIVATE ${torch_libs})
# torch is imported before the module loads, so its libraries are found by soname among those
# loaded; the run paths serve a module loaded on its own (torch beside viewfuse in site-packages).
set_target_properties(_torch_fast PROPERTIES CXX_VISIBILITY_PRESET hidden BUILD_RPATH "${torch_dir}/lib"
                                             INSTALL_RPATH "$ORIGIN/../torch/lib")
set(build_doc "Written by the build: the torch version viewfuse._torch_fast was compiled against.")
file(CONFIGURE OUTPUT "${CMAKE_CURRENT_BINARY_DIR}/_torch_fast_build.py" @ONLY
     CONTENT "\"\"\"@build_doc@\"\"\"\n\nTORCH_VERSION = \"@VF_TORCH_VERSION@\"\n")
add_dependencies(vf_python_modules _torch_fast)
if(SKBUILD)
  install(TARGETS _torch_fast LIBRARY DESTINATION viewfuse)
  install(FILES "${CMAKE_CURRENT_BINARY_DIR}/_torch_fast_build.py" DESTINATION viewfuse)
endif()
