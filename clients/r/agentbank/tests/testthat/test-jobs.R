test_that("a job is submitted once per idempotency key, waited for and read", {
  bank <- live()
  team <- bank_connect(bank$url, bank$team[1], bank$team[2])
  request <- survey_request("gss", c("cappun", "gunlaw"), bank$agents)
  job <- bank_submit(team, bank$project, request, idempotency_key = "r-study-1")
  expect_equal(job$total, length(bank$agents))
  ended <- bank_wait(team, job$id, poll_s = 0.2, timeout_s = 120, progress = FALSE)
  expect_equal(ended$status, "done")
  expect_equal(ended$done, length(bank$agents))
  again <- bank_submit(team, bank$project, request, idempotency_key = "r-study-1")
  expect_equal(again$id, job$id)  # the same job, not a second one
  reused <- tryCatch(
    bank_submit(team, bank$project, survey_request("gss", "grass", bank$agents), idempotency_key = "r-study-1"),
    agentbank_error = identity)
  expect_s3_class(reused, "agentbank_error")
  expect_equal(reused$code, "idempotency_key_reused")

  answers <- bank_results(team, job$id)
  expect_equal(nrow(answers), 2 * length(bank$agents))
  expect_setequal(answers$key, c("cappun", "gunlaw"))
  expect_setequal(answers$agent_id, bank$agents)
  expect_true(all(answers$status == "released") && all(!is.na(answers$value)))
  expect_true(all(answers$model == "fake"))
  # Each coded answer carries its label from the GSS's codes.
  cappun <- answers[answers$key == "cappun", ]
  expect_true(all(cappun$label == c("favor", "oppose")[cappun$value]))

  table <- bank_results_table(team, job$id)
  expect_equal(nrow(table), length(bank$agents))
  expect_setequal(table$agent_id, bank$agents)
  expect_s3_class(table$cappun, "haven_labelled")
  expect_equal(unname(attr(table$cappun, "labels")[["favor"]]), 1)
  expect_match(attr(table$cappun, "label"), "death", ignore.case = TRUE)
  by_agent <- cappun$value[match(table$agent_id, cappun$agent_id)]
  expect_equal(as.numeric(table$cappun), by_agent)
})

test_that("a job the client may not see is a 404, and waiting gives up after its timeout", {
  bank <- live()
  team <- bank_connect(bank$url, bank$team[1], bank$team[2])
  missing <- tryCatch(bank_wait(team, "00000000-0000-0000-0000-000000000000", timeout_s = 1),
                      agentbank_error = identity)
  expect_equal(missing$status, 404)
  job <- bank_submit(team, bank$project, survey_request("gss", "grass", bank$agents[1]))
  # Timed out, unless the worker answered within the moment between submitting and the first poll.
  waited <- tryCatch(bank_wait(team, job$id, poll_s = 0.1, timeout_s = 0), agentbank_timeout = conditionMessage)
  expect_true(is.list(waited) || grepl("has not ended after 0 s", waited))
  bank_wait(team, job$id, poll_s = 0.2, timeout_s = 120, progress = FALSE)
})
