#include "parse/settings/job_settings.h"

#include <gtest/gtest.h>
