#include "backend/token_file_watch.h"

#include <sys/stat.h>

#include <utility>

#include "backend/token_file.h"
#include "util/log.h"

namespace oxide::backend {

// One stat-and-maybe-read on the worker pool. Filled by the worker, read on the loop.
struct TokenFileWatch::Look {
  uv_work_t work{};
  TokenFileWatch* owner = nullptr;  // null once the watch is gone: the look only frees itself
  std::string path;
  bool force = false;
  bool known_valid = false;
  FileIdentity known;
  // Results.
  bool unchanged = false;  // the same file as `known`: not read
  FileIdentity identity;
  Status status;
  std::string token;  // secret
};

namespace {

std::string Text(uint64_t value) {
  return std::to_string(value);
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

TokenFileWatch::TokenFileWatch(uv_loop_t* loop, Clock* clock, std::string path, ApiToken* token,
                               std::chrono::milliseconds period)
    : loop_(loop), clock_(clock), path_(std::move(path)), token_(token), period_(period) {
  token_->set_refresher([this](std::function<void()> done) { LookAgain(true, std::move(done)); });
  directory_watch_ = new uv_fs_event_t;
  uv_fs_event_init(loop_, directory_watch_);
  directory_watch_->data = this;
  const int error = uv_fs_event_start(directory_watch_, &TokenFileWatch::OnDirectoryEvent,
                                      DirectoryOf(path_).c_str(), 0);
  if (error != 0) {
    log::Warn(
        "cannot watch the Oxide token file's directory; a rotated token is noticed by the "
        "periodic check only",
        {{"file", path_},
         {"error", uv_strerror(error)},
         {"period_s", Text(static_cast<uint64_t>(period_.count() / 1000))}});
    uv_close(reinterpret_cast<uv_handle_t*>(directory_watch_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_fs_event_t*>(h); });
    directory_watch_ = nullptr;
  }
  // The first look learns which file the start-up token came from (and catches a change since).
  LookAgain(false, nullptr);
  ArmTimer();
}

TokenFileWatch::~TokenFileWatch() {
  token_->set_refresher(nullptr);
  if (timer_ != 0) clock_->CancelTimer(timer_);
  if (running_ != nullptr) running_->owner = nullptr;
  if (directory_watch_ != nullptr) {
    uv_close(reinterpret_cast<uv_handle_t*>(directory_watch_),
             [](uv_handle_t* h) { delete reinterpret_cast<uv_fs_event_t*>(h); });
  }
}

void TokenFileWatch::OnDirectoryEvent(uv_fs_event_t* handle, const char*, int, int) {
  static_cast<TokenFileWatch*>(handle->data)->LookAgain(true, nullptr);
}

void TokenFileWatch::ArmTimer() {
  timer_ = clock_->StartTimer(period_, [this] {
    timer_ = 0;
    LookAgain(false, nullptr);
    ArmTimer();
  });
}

void TokenFileWatch::LookAgain(bool force, std::function<void()> done) {
  affinity_.Check("TokenFileWatch::LookAgain");
  if (running_ == nullptr) {
    next_forced_ = force;
    if (done) after_running_.push_back(std::move(done));
    StartLook();
    return;
  }
  // The look under way may have read the file before the change that prompted this ask.
  next_wanted_ = true;
  next_forced_ = next_forced_ || force;
  if (done) after_next_.push_back(std::move(done));
}

void TokenFileWatch::StartLook() {
  auto* look = new Look;
  look->owner = this;
  look->path = path_;
  look->force = next_forced_;
  look->known_valid = known_valid_;
  look->known = known_;
  look->work.data = look;
  next_forced_ = false;
  running_ = look;
  ++looks_;
  const int error = uv_queue_work(
      loop_, &look->work,
      [](uv_work_t* work) {  // worker thread: touches only the Look
        auto* l = static_cast<Look*>(work->data);
        struct stat st {};
        if (::stat(l->path.c_str(), &st) == 0) {
          l->identity = {st.st_dev, st.st_ino, st.st_size,
                         int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec};
          if (!l->force && l->known_valid && l->identity == l->known) {
            l->unchanged = true;
            return;
          }
        }
        StatusOr<std::string> token = ReadTokenFile(l->path);
        if (token.ok()) {
          l->token = std::move(*token);
        } else {
          l->status = token.status();
        }
      },
      [](uv_work_t* work, int) {  // loop thread
        auto* l = static_cast<Look*>(work->data);
        if (l->owner != nullptr) l->owner->Finish(*l);
        delete l;
      });
  if (error != 0) {  // cannot happen with a valid loop and callback; keep the old token
    running_ = nullptr;
    delete look;
    log::Error("cannot look at the Oxide token file",
               {{"file", path_}, {"error", uv_strerror(error)}});
  }
}

void TokenFileWatch::Finish(Look& look) {
  running_ = nullptr;
  if (look.unchanged) {
    // The file the token was read from: nothing to do.
  } else if (!look.status.ok()) {
    known_valid_ = false;
    if (look.status.message() != problem_) {
      problem_ = look.status.message();
      log::Warn("the Oxide token file cannot be used; the last good token stays in use",
                {{"file", path_}, {"error", problem_}});
    }
  } else {
    known_ = look.identity;
    known_valid_ = true;
    if (!problem_.empty()) {
      problem_.clear();
      log::Info("the Oxide token file is readable again", {{"file", path_}});
    }
    if (look.token != token_->value()) {
      token_->Replace(std::move(look.token));
      log::Info("reloaded the Oxide API token from " + path_,
                {{"reloads", Text(token_->reloads())}});
    }
  }
  auto done = std::move(after_running_);
  after_running_ = std::move(after_next_);
  after_next_.clear();
  if (next_wanted_) {
    next_wanted_ = false;
    StartLook();
  }
  for (auto& callback : done)
    callback();
}

}  // namespace oxide::backend
