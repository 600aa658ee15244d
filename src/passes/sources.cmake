list(APPEND VF_SOURCES passes/bookend.cpp)
list(APPEND VF_SOURCES passes/split_reductions.cpp passes/fusion_rewriter.cpp passes/fold_trivial_reductions.cpp passes/split_column_reductions.cpp passes/elide_round_trip_casts.cpp passes/zero_based_scatters.cpp passes/fuse_matmul_epilogues.cpp passes/merge_duplicate_ops.cpp passes/fold_one_hot_sums.cpp passes/compact_row_scatters.cpp)
