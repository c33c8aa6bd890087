# Generates a C++ file whose function NAME() returns the text of INPUT (run at build time).
# Inputs: INPUT, OUTPUT, NAME, HEADER (the header that declares NAME).
file(READ ${INPUT} text)
file(WRITE ${OUTPUT}.new "// Generated from ${INPUT} by cmake/EmbedText.cmake. Do not edit.
#include \"${HEADER}\"

namespace fabricproof {

std::string_view ${NAME}() {
  return R\"fp_embedded(${text})fp_embedded\";
}

}  // namespace fabricproof
")
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
