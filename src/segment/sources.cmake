list(APPEND VF_SOURCES segment/extract_segment.cpp segment/output_layouts.cpp segment/memory_plan.cpp
     segment/matmul_segment.cpp segment/rewrite_for_planning.cpp segment/plan_fusion.cpp
     segment/plan_ordered_ops.cpp segment/plan_kernels.cpp
     segment/explain.cpp)
