# Fails when a source file of a layer includes protobuf, gRPC, generated or rpc/ headers: the
# state machines in engine/ must not know the wire format (that belongs in src/csi/).
#   cmake -DLAYER_DIR=<dir> -DSTAMP=<file> -P CheckLayerIncludes.cmake
set(FORBIDDEN "[<\"](grpc|grpcpp|google/protobuf|rpc)/|\\.pb\\.h[>\"]")
file(GLOB layer_files "${LAYER_DIR}/*.h" "${LAYER_DIR}/*.cc")
set(offenders "")
foreach(path IN LISTS layer_files)
  file(STRINGS "${path}" includes REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS includes)
    if(line MATCHES "${FORBIDDEN}")
      list(APPEND offenders "${path}: ${line}")
    endif()
  endforeach()
endforeach()
if(offenders)
  list(JOIN offenders "\n  " listed)
  message(FATAL_ERROR "${LAYER_DIR} must not include protobuf, gRPC or rpc/ headers "
                      "(they belong in src/csi/):\n  ${listed}")
endif()
file(TOUCH "${STAMP}")
