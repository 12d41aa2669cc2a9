library(testthat)
library(agentbank)

test_check("agentbank")
