# The suites tests/labels.txt marks `together` (their tests share a costly SetUpTestSuite: a
# registry, images pushed, keys, reports attached) run as one ctest test each, "Suite.*", in one
# process: the set-up once instead of once per test (ctest runs every other test in a process
# of its own). Included before gtest_discover_tests(integration_tests), which leaves them out
# through kdk_together_filter; kdk_add_together_tests() adds them after it, with the labels the
# table gives any test of the suite.
file(STRINGS ${CMAKE_CURRENT_SOURCE_DIR}/labels.txt kdk_together_lines)
set(kdk_together_suites "")
set(kdk_together_rules "")
foreach(line IN LISTS kdk_together_lines)
  string(REGEX REPLACE "#.*" "" line "${line}")
  string(STRIP "${line}" line)
  if(line MATCHES "^together[ \t]+([A-Za-z0-9_]+)\\.\\*$")
    list(APPEND kdk_together_suites "${CMAKE_MATCH_1}")
  elseif(line MATCHES "^together")
    message(FATAL_ERROR "tests/labels.txt: together takes a whole suite (Suite.*): ${line}")
  elseif(line MATCHES "^([a-z][a-z0-9]*)[ \t]+([A-Za-z0-9_]+)\\.")
    list(APPEND kdk_together_rules "${CMAKE_MATCH_1}|${CMAKE_MATCH_2}")
  endif()
endforeach()
set(kdk_together_filter "")
if(kdk_together_suites)
  list(TRANSFORM kdk_together_suites APPEND ".*" OUTPUT_VARIABLE patterns)
  list(JOIN patterns ":" patterns)
  set(kdk_together_filter "-${patterns}")
endif()

function(kdk_add_together_tests target)
  foreach(suite IN LISTS kdk_together_suites)
    add_test(NAME "${suite}.*" COMMAND ${target} "--gtest_filter=${suite}.*")
    set(labels integration)
    foreach(rule IN LISTS kdk_together_rules)
      string(REPLACE "|" ";" rule "${rule}")
      list(GET rule 0 label)
      list(GET rule 1 of)
      if(of STREQUAL suite AND NOT label IN_LIST labels)
        list(APPEND labels ${label})
      endif()
    endforeach()
    # No SKIP_REGULAR_EXPRESSION as gtest_discover_tests gives each test: it would win over a
    # failure of another test of the suite. A suite whose tests all skip (what they need is not
    # here: they name it) shows as passed; scripts/test installs what they need.
    set_tests_properties("${suite}.*" PROPERTIES LABELS "${labels}")
    if("slow" IN_LIST labels)
      set_tests_properties("${suite}.*" PROPERTIES COST 1000)
    endif()
  endforeach()
endfunction()
