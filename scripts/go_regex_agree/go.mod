module go_regex_agree

go 1.26
