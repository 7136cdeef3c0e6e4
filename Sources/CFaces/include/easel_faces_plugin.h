// libEaselFaces.so exports the functions declared in CFacesLoader's easel_faces.h
// (easel_faces_abi, easel_detect, easel_thumbor_focus, easel_face_prepare); the
// executable never links this target, it loads the library with dlopen.
#pragma once
#include "easel_faces.h"
