list(APPEND VF_SOURCES frontend/lexer.cpp frontend/parser.cpp frontend/trace_reader.cpp)
