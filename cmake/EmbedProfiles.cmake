# Generates builtin_profiles.cpp from suite/profiles/*.json (run at build time by add_custom_command).
# Inputs: OUTPUT, PROFILES (comma-separated list of files).
string(REPLACE "," ";" PROFILES "${PROFILES}")
set(body "")
foreach(file IN LISTS PROFILES)
  get_filename_component(name ${file} NAME_WE)
  file(READ ${file} text)
  string(APPEND body "    {\"${name}\", R\"fp_profile(${text})fp_profile\"},\n")
endforeach()
file(WRITE ${OUTPUT}.new "// Generated from suite/profiles/*.json by cmake/EmbedProfiles.cmake. Do not edit.
#include \"core/builtin_profiles.hpp\"

namespace fabricproof {

const std::vector<std::pair<std::string_view, std::string_view>>& builtin_profiles() {
  static const std::vector<std::pair<std::string_view, std::string_view>> profiles = {
${body}  };
  return profiles;
}

std::optional<std::string_view> builtin_profile_text(std::string_view name) {
  for (const auto& [key, text] : builtin_profiles())
    if (key == name) return text;
  return std::nullopt;
}

}  // namespace fabricproof
")
file(COPY_FILE ${OUTPUT}.new ${OUTPUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUTPUT}.new)
