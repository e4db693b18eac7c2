--[[
  Sample Slurm cli_filter plugin (cli_filter/lua): run `slurmdiag lint` on a batch script when it is
  submitted with sbatch, and print what it finds. It only WARNS: it never rejects a job (a
  cli_filter runs on the user's side and is bypassable by design; enforcing belongs elsewhere).

  Install (slurm.conf):   CliFilterPlugins=cli_filter/lua
  and place this file as  /etc/slurm/cli_filter.lua  (next to slurm.conf).
  Set SLURMDIAG below to the slurmdiag installed on the login nodes and, optionally,
  SLURMDIAG_SITE to the site profile. Set SLURMDIAG_LINT=0 in the environment to skip it.

  Not tested against a live Slurm here: check it with `sbatch --test-only job.sh` first.
  slurm_cli_pre_submit receives the options sbatch parsed (command line and #SBATCH merged); the
  script's path is the first positional argument (options.argv[1] on Slurm 21.08+; older
  releases pass it differently, see the cli_filter_plugins man page).
]]

local SLURMDIAG = "/opt/slurmdiag/bin/slurmdiag"
local SITE = os.getenv("SLURMDIAG_SITE") or "/etc/slurm/slurmdiag-site.yaml"
local TIMEOUT_S = 10

local function shell_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

local function file_exists(path)
  local f = io.open(path, "r")
  if f then f:close() return true end
  return false
end

function slurm_cli_setup_defaults(options, early_pass)
  return slurm.SUCCESS
end

function slurm_cli_post_submit(offset, jobid, stepid)
  return slurm.SUCCESS
end

function slurm_cli_pre_submit(options, offset)
  -- only sbatch, only when not disabled, only when slurmdiag is installed
  if os.getenv("SLURMDIAG_LINT") == "0" or options.type ~= "sbatch" then
    return slurm.SUCCESS
  end
  local script = options.argv and options.argv[1]
  if not script or not file_exists(script) or not file_exists(SLURMDIAG) then
    return slurm.SUCCESS
  end
  -- The node count sbatch settled on (command line over #SBATCH) is what multi-node checks need.
  local extra = ""
  if options.nodes and options.nodes ~= "" then
    extra = " -- --nodes=" .. shell_quote(options.nodes)
  end
  local profile = ""
  if file_exists(SITE) then
    profile = " --profile " .. shell_quote(SITE)
  end
  local cmd = "timeout " .. TIMEOUT_S .. " " .. SLURMDIAG .. " lint --format text --no-color --fail-on never"
    .. profile .. " " .. shell_quote(script) .. extra .. " 2>&1"
  local pipe = io.popen(cmd)
  if not pipe then
    return slurm.SUCCESS
  end
  local out = pipe:read("*a") or ""
  pipe:close()
  if not out:find("no known problem found", 1, true) and out ~= "" then
    -- stderr reaches the user's terminal; slurm.log_info would need sbatch -v
    io.stderr:write("slurmdiag lint: possible problems in " .. script .. " (the job is submitted anyway):\n" .. out)
  end
  return slurm.SUCCESS
end
