list(APPEND VF_SOURCES frontend/lexer.cpp frontend/parser.cpp frontend/lower_call.cpp frontend/lower_indexing.cpp frontend/torch_spellings.cpp frontend/trace_reader.cpp)
