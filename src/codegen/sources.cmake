list(APPEND VF_SOURCES codegen/kernel_ir.cpp codegen/lower_kernel.cpp codegen/lower_reduction.cpp codegen/lower_scatter.cpp codegen/lower_scan.cpp codegen/emit_expr.cpp codegen/emit_cpp.cpp)
list(APPEND VF_SOURCES codegen/emit_cuda.cpp codegen/emit_cuda_tiled.cpp codegen/emit_cuda_reduction.cpp codegen/generate_kernel.cpp codegen/pack_launch.cpp codegen/specialize_kernel.cpp)
list(APPEND VF_SOURCES codegen/schedule_cpu.cpp codegen/schedule_cuda.cpp codegen/print_kernel_ir.cpp codegen/fold_tanh_gelu.cpp codegen/kernel_name.cpp)
