mod compare_gbench;
mod history;
mod instructions_parse;
mod system_show;
mod system_tune;
