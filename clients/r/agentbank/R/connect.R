# Signing in and speaking to the bank: one connection per client, a token from the bank's OAuth2 token
# endpoint (client credentials) that httr2 fetches again when it expires, and the bank's refusals as R
# conditions of class `agentbank_error` with the bank's code, message and HTTP status.

#' Connect to a bank with an API client's id and secret.
#'
#' The credentials are checked at once: a wrong id or secret, or a revoked client, raises an
#' `agentbank_error` with status 401. The secret is kept only inside httr2's OAuth client.
#'
#' @param url The bank's address, e.g. "http://127.0.0.1:8000".
#' @param client_id,client_secret What `agentbank clients create` printed.
#' @param timeout_s Seconds one request may take.
#' @return A connection for the other `bank_*` functions.
#' @export
bank_connect <- function(url, client_id, client_secret, timeout_s = 30) {
  url <- sub("/+$", "", url)
  client <- httr2::oauth_client(
    id = client_id, token_url = paste0(url, "/oauth/token"), secret = client_secret,
    auth = "header", name = paste0("agentbank-", client_id)
  )
  tryCatch(
    httr2::oauth_flow_client_credentials(client),
    error = function(e) {
      bank_error(401, "invalid_client", "the bank refused the client's id or secret")
    }
  )
  structure(list(url = url, client = client, client_id = client_id, timeout_s = timeout_s),
            class = "agentbank_connection")
}

#' @export
print.agentbank_connection <- function(x, ...) {
  cat("<agentbank connection to ", x$url, " as client ", x$client_id, ">\n", sep = "")
  invisible(x)
}

bank_error <- function(status, code, message) {
  stop(structure(
    class = c("agentbank_error", "error", "condition"),
    list(message = sprintf("%s %s: %s", status, code, message), call = NULL,
         status = status, code = code, bank_message = message)
  ))
}

bank_request <- function(bank, path) {
  stopifnot(inherits(bank, "agentbank_connection"))
  httr2::request(paste0(bank$url, path)) |>
    httr2::req_oauth_client_credentials(bank$client) |>
    httr2::req_timeout(bank$timeout_s) |>
    httr2::req_user_agent("agentbank R client") |>
    httr2::req_error(is_error = function(resp) FALSE)
}

# Performs the request; a refusal becomes an `agentbank_error` with the bank's own code and message.
bank_perform <- function(req) {
  resp <- httr2::req_perform(req)
  status <- httr2::resp_status(resp)
  if (status >= 400) {
    body <- tryCatch(httr2::resp_body_json(resp, simplifyVector = FALSE), error = function(e) NULL)
    if (is.list(body) && is.list(body$error)) {
      bank_error(status, body$error$code, body$error$message)
    }
    bank_error(status, "http_error", substr(httr2::resp_body_string(resp), 1, 200))
  }
  resp
}

bank_json <- function(bank, path, query = list()) {
  req <- bank_request(bank, path)
  if (length(query)) req <- httr2::req_url_query(req, !!!query)
  httr2::resp_body_json(bank_perform(req), simplifyVector = FALSE)
}

#' Download a table of the bank to a file: an open-tier table or a job's results, in one of the
#' bank's file formats ("csv", "parquet", or with value and variable labels "dta" and "sav").
#'
#' @param bank A connection from [bank_connect()].
#' @param path The route, e.g. "/v1/jobs/ID/results".
#' @param format The file format.
#' @param file Where to write it; a temporary file by default.
#' @param query Further query parameters.
#' @return The file's path.
#' @export
bank_download <- function(bank, path, format = c("dta", "sav", "csv", "parquet"),
                          file = tempfile(fileext = paste0(".", format)), query = list()) {
  format <- match.arg(format)
  req <- httr2::req_url_query(bank_request(bank, path), format = format, !!!query)
  writeBin(httr2::resp_body_raw(bank_perform(req)), file)
  file
}

# A field of every row, JSON null as NA, converted to one type.
pluck <- function(rows, name, convert = as.character) {
  convert(unlist(lapply(rows, function(row) if (is.null(row[[name]])) NA else row[[name]])))
}
