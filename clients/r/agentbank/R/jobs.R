# A team's jobs: submitted once per idempotency key, waited for, and their results read as a long tibble
# (one row per agent and answer) or as a labelled table (one row per agent, a labelled column per item).

ENDED <- c("done", "partial", "failed")

#' A survey job's request: items of one instrument for the given agents.
#' @param instrument The instrument's key, e.g. "gss".
#' @param items Item keys, e.g. c("cappun", "gunlaw").
#' @param agents The agents' ids (from the project's approved agents).
#' @param condition "interview", "demographic" or "persona".
#' @export
survey_request <- function(instrument, items, agents, condition = "interview") {
  list(kind = "survey", instrument = instrument, items = as.list(items), agents = as.list(agents),
       condition = condition)
}

#' Submit a job once: sending it again with the same `idempotency_key` returns the same job (and a
#' different request under a key already used is refused). A key is made when none is given.
#' @param bank A connection from [bank_connect()].
#' @param project_id The approved project's id.
#' @param request A job's request: [survey_request()], or a list as the API takes it.
#' @param idempotency_key Names this submission.
#' @return The job: a list with `id`, `status`, `total`, `done`, ...
#' @export
bank_submit <- function(bank, project_id, request, idempotency_key = NULL) {
  if (is.null(idempotency_key)) {
    idempotency_key <- paste0("r-client-", paste(as.character(openssl::rand_bytes(16)), collapse = ""))
  }
  req <- bank_request(bank, paste0("/v1/projects/", project_id, "/jobs")) |>
    httr2::req_headers(`Idempotency-Key` = idempotency_key) |>
    httr2::req_body_json(request, auto_unbox = TRUE, null = "null")
  httr2::resp_body_json(bank_perform(req), simplifyVector = FALSE)
}

#' A job's status and progress (`done` of `total` agents).
#' @param bank A connection from [bank_connect()].
#' @param job_id The job's id.
#' @export
bank_job <- function(bank, job_id) {
  bank_json(bank, paste0("/v1/jobs/", job_id))
}

#' Poll until the job has ended (done, partial or failed).
#' @param bank A connection from [bank_connect()].
#' @param job_id The job's id.
#' @param poll_s Seconds between polls.
#' @param timeout_s Give up (an error of class `agentbank_timeout`) after this many seconds.
#' @param progress Print each change of progress.
#' @return The ended job.
#' @export
bank_wait <- function(bank, job_id, poll_s = 2, timeout_s = Inf, progress = interactive()) {
  began <- Sys.time()
  job <- bank_job(bank, job_id)
  seen <- -1
  while (!(job$status %in% ENDED)) {
    if (progress && job$done != seen) {
      message(sprintf("job %s: %d of %d agents", substr(job_id, 1, 8), job$done, job$total))
      seen <- job$done
    }
    if (as.numeric(difftime(Sys.time(), began, units = "secs")) > timeout_s) {
      stop(structure(class = c("agentbank_timeout", "error", "condition"), list(
        message = sprintf("job %s has not ended after %.0f s (%d done)", job_id, timeout_s, job$done),
        call = NULL)))
    }
    Sys.sleep(poll_s)
    job <- bank_job(bank, job_id)
  }
  job
}

#' A job's answers: one row per agent and answer, with the agent's status, what the answer is to (`key`:
#' the item, `question N`, or an experiment's `arm:item`), the value, a coded answer's label, the reason,
#' whether it is withheld and the model; an agent answered by nobody is one row without an answer.
#' @param bank A connection from [bank_connect()].
#' @param job_id The job's id.
#' @export
bank_results <- function(bank, job_id) {
  results <- bank_json(bank, paste0("/v1/jobs/", job_id, "/results"))
  rows <- list()
  for (result in results) {
    base <- list(agent_id = result$agent_id, status = result$status,
                 arms = if (length(result$arms)) paste(unlist(result$arms), collapse = ",") else NA,
                 validity = result$validity$status)
    answers <- if (length(result$answers)) result$answers else list(list(key = NA))
    for (answer in answers) {
      value <- answer$value
      rows[[length(rows) + 1]] <- c(base, list(
        key = answer$key, value = if (is.null(value)) NA else value,
        label = if (is.null(answer$label)) NA else answer$label,
        reason = if (is.null(answer$reason)) NA else answer$reason,
        withheld = isTRUE(answer$withheld),
        model = if (is.null(answer$provenance$model)) NA else answer$provenance$model))
    }
  }
  values <- pluck(rows, "value", identity)
  tibble::tibble(
    agent_id = pluck(rows, "agent_id"), status = pluck(rows, "status"), arms = pluck(rows, "arms"),
    validity = pluck(rows, "validity"), key = pluck(rows, "key"),
    value = if (is.numeric(values) || all(is.na(values))) as.numeric(values) else as.character(values),
    label = pluck(rows, "label"), reason = pluck(rows, "reason"),
    withheld = pluck(rows, "withheld", as.logical), model = pluck(rows, "model")
  )
}

#' A job's results as a labelled table: one row per agent, one column per item, each coded answer a
#' labelled vector (haven's `labelled`) with its options' labels and the question as its label, as the
#' bank writes them into a Stata file.
#' @param bank A connection from [bank_connect()].
#' @param job_id The job's id.
#' @export
bank_results_table <- function(bank, job_id) {
  file <- bank_download(bank, paste0("/v1/jobs/", job_id, "/results"), "dta")
  on.exit(unlink(file))
  table <- haven::read_dta(file)
  attr(table, "job") <- job_id
  table
}
