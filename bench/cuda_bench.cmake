# tessera_cuda_bench (bench/cuda_bench.cpp): the CUDA backend against cudart/cuBLASLt/cuBLAS
# called directly, in one run. Built with the CUDA backend (TESSERA_HAVE_CUDA); included from
# bench/CMakeLists.txt.
if(TARGET tessera_train)
  add_executable(tessera_cuda_bench ${CMAKE_CURRENT_LIST_DIR}/cuda_bench.cpp)
  target_link_libraries(tessera_cuda_bench PRIVATE tessera_train tessera tessera_sdk CUDA::cudart CUDA::cublasLt
    CUDA::cublas)
  target_compile_options(tessera_cuda_bench PRIVATE -Wall -Wextra $<$<NOT:$<CONFIG:Debug>>:-O3>)
  # The plugins it measures are loaded at run time: build them with it.
  foreach(p IN ITEMS tessera_cpu tessera_cuda tessera_cuda_backend)
    if(TARGET ${p})
      add_dependencies(tessera_cuda_bench ${p})
    endif()
  endforeach()
else()
  message(STATUS "tessera_cuda_bench: needs tessera_train (TESSERA_BUILD_TOOLS), left out")
endif()
