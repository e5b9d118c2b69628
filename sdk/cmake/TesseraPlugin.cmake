# tessera_add_plugin(<target> NAME <name> VERSION <v> [DEPENDS dep...] [OUTPUT_DIR dir]
#                    [INSTALL_DIR dir] [TESTS file.json] SOURCES src...)
# Builds a plugin as a MODULE library named <target>.so linked only against Tessera::sdk (never
# the core), writes its manifest <target>.json beside it, and installs both. TESTS: the
# plugin's own conformance test cases (docs/conformance.md), copied beside it as
# <target>.tests.json, where `tessera conformance` and `tessera certify` find them.
# The ABI a plugin is built against (written into its manifest); the top-level project and the
# installed package set it from abi/tessera/version.h.
if(NOT DEFINED TESSERA_ABI_VERSION)
  set(TESSERA_ABI_VERSION "@TESSERA_ABI_VERSION@")
endif()

function(tessera_add_plugin target)
  cmake_parse_arguments(P "" "NAME;VERSION;OUTPUT_DIR;INSTALL_DIR;TESTS" "DEPENDS;SOURCES" ${ARGN})
  if(NOT P_NAME)
    set(P_NAME ${target})
  endif()
  if(NOT P_VERSION)
    set(P_VERSION 0.1.0)
  endif()
  add_library(${target} MODULE ${P_SOURCES})
  if(TARGET tessera_sdk)
    target_link_libraries(${target} PRIVATE tessera_sdk)
  else()
    target_link_libraries(${target} PRIVATE Tessera::sdk)
  endif()
  set_target_properties(${target} PROPERTIES PREFIX "" CXX_VISIBILITY_PRESET hidden
    C_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
  # A plugin exports its entry point and nothing else (no symbol of a library it embeds can
  # clash with the host's or another plugin's).
  set(map ${CMAKE_CURRENT_BINARY_DIR}/${target}.exports.map)
  file(WRITE ${map} "{\n  global: tsr_plugin_query;\n  local: *;\n};\n")
  target_link_options(${target} PRIVATE "-Wl,--version-script=${map}")
  if(P_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${P_OUTPUT_DIR})
    set(out_dir ${P_OUTPUT_DIR})
  elseif(DEFINED TESSERA_PLUGIN_OUTPUT_DIR)
    set_target_properties(${target} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${TESSERA_PLUGIN_OUTPUT_DIR})
    set(out_dir ${TESSERA_PLUGIN_OUTPUT_DIR})
  else()
    set(out_dir ${CMAKE_CURRENT_BINARY_DIR})
  endif()
  set(deps "")
  foreach(d IN LISTS P_DEPENDS)
    if(deps)
      string(APPEND deps ", ")
    endif()
    string(APPEND deps "\"${d}\"")
  endforeach()
  file(GENERATE OUTPUT ${out_dir}/${target}.json CONTENT
    "{\"name\": \"${P_NAME}\", \"version\": \"${P_VERSION}\", \"abi\": \"${TESSERA_ABI_VERSION}\", \"depends\": [${deps}]}\n")
  if(P_TESTS)
    get_filename_component(tests_src ${P_TESTS} ABSOLUTE)
    configure_file(${tests_src} ${out_dir}/${target}.tests.json COPYONLY)
  endif()
  if(P_INSTALL_DIR)
    install(TARGETS ${target} LIBRARY DESTINATION ${P_INSTALL_DIR})
    install(FILES ${out_dir}/${target}.json DESTINATION ${P_INSTALL_DIR})
    if(P_TESTS)
      install(FILES ${out_dir}/${target}.tests.json DESTINATION ${P_INSTALL_DIR})
    endif()
  endif()
endfunction()
